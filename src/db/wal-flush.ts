// The embedded store's write-ahead log, written to disk as it grows, off the main thread.
//
// With synchronous = NORMAL a commit hands the log's new pages to the operating system and
// does not wait for the disk. The checkpoint then calls fsync on the log, on the main thread,
// and that call writes out everything committed since the last one: about 70 ms for the
// 4,000 pages of an automatic checkpoint on the CI VM, a stall of every request in flight,
// and the p99 of a test suite's sequential writes. Calling fdatasync on the log from libuv's
// thread pool every few milliseconds writes those pages meanwhile, so the checkpoint finds
// them on disk (in a loop: 190 ms → 30 ms for 15,000 frames). Durability is unchanged: this
// only adds syncs.
//
// note: only the log is opened here, never the database file. A process that closes any
// descriptor of a file loses every POSIX lock it holds on that file, which would drop
// SQLite's lock on the database; the log carries none (exclusive locking keeps the WAL index
// in memory).

import { close, fdatasync, open } from 'node:fs';

export interface LogFlusher {
  /** Syncs made so far (for tests). */
  readonly flushes: number;
  /** Stops flushing; resolves once no sync is in flight and the descriptor is closed. */
  close(): Promise<void>;
}

/** How often the log is synced while writes go on (railyard's store and the bench's floor). */
export const LOG_FLUSH_INTERVAL_MS = 20;

/**
 * Flushes `databaseFile`'s log every `intervalMs` while `changes()` moves (SQLite's
 * total_changes(), read on the main thread; an idle store costs one cheap read a tick).
 */
export function flushLogWhileWriting(
  databaseFile: string,
  changes: () => number,
  intervalMs = LOG_FLUSH_INTERVAL_MS,
): LogFlusher {
  let fd: number | undefined;
  let busy = false;
  let closed = false;
  let flushes = 0;
  let flushedAt = changes();
  let idle: (() => void) | undefined;
  const settle = () => {
    busy = false;
    if (closed) idle?.();
  };
  const timer = setInterval(() => {
    if (busy || closed) return;
    const now = changes();
    if (now === flushedAt) return;
    busy = true;
    const sync = (descriptor: number) =>
      fdatasync(descriptor, () => {
        flushes++;
        settle();
      });
    if (fd !== undefined) {
      flushedAt = now;
      sync(fd);
      return;
    }
    // The log exists once the first write has happened; until then there is nothing to sync.
    open(`${databaseFile}-wal`, 'r', (err, opened) => {
      if (err !== null || closed) {
        if (err === null) close(opened, () => {});
        settle();
        return;
      }
      fd = opened;
      flushedAt = now;
      sync(opened);
    });
  }, intervalMs);
  timer.unref();
  return {
    get flushes() {
      return flushes;
    },
    async close() {
      closed = true;
      clearInterval(timer);
      if (busy) await new Promise<void>((resolve) => (idle = resolve));
      if (fd !== undefined) {
        const descriptor = fd;
        fd = undefined;
        await new Promise<void>((resolve) => close(descriptor, () => resolve()));
      }
    },
  };
}
