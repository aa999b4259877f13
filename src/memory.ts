// Giving memory back once a burst of load is over. Under load, objects that live for the
// length of a request (held across a group commit, a webhook send) are promoted out of V8's
// young generation and die in the old one, which V8 collects only when it reaches a limit set
// from the last collection: after the bench's scenarios, about 80 MB of the main heap was
// such garbage, kept for as long as the server stays idle (measured: no collection in 30 s
// of idleness). A long-lived shared instance would hold it between bursts. So once no request
// has come and no job has run for a whole interval (webhook deliveries may go on for seconds
// after the last request), and the heap has grown by a set amount since the last full
// collection, one full collection runs, compacting (tens of milliseconds, on an idle server).
//
// The young generation is the other part a burst leaves: V8 grows it to 32 MB under load
// and shrinks it only in a full collection that finds little allocated since the collection
// before, five seconds or more earlier, which neither its own collections nor the one above
// are on a server that has just gone idle. So once `IDLE_SETTLE_INTERVALS` intervals have
// passed with no activity and no collection, one more full collection runs if the young
// generation is still large. It compacts too (some 40 ms against 20 for a plain one), so that
// the old generation's pages are given back here, at a time of ours.
//
// V8's own memory reducer comes after: a full collection of a heap that has grown since the
// reducer last ran (ours, here) starts it, and it runs its collections once its timer, every
// 8 s, finds allocation low: 15 to 45 s after the last request, measured. It runs up to
// three, each a whole marking of the heap (26 MB on an idle server, 4 to 8 ticks of 10 ms of
// CPU each on this VM), which is most of what an idle server spends in its first minute
// (bench/idle.ts). After a compaction of ours the second finds nothing left to give back, so
// the server lets it run one (`--memory-reducer-single-gc`, a V8 flag read at each of its
// steps, so it may be set once the process runs). Turning the reducer off altogether
// (`--no-memory-reducer`) is read only when the heap is made, so it would have to be on every
// command line that starts the server; measured with it, the young generation then stayed at
// its 32 MB when V8 found too much allocated before the settling collection.
//
// After that the ticks stop, until the next request: a server left idle all day wakes for
// nothing (each wake-up of a thread costs CPU even when it does nothing: bench/idle.ts).
// Work that comes without a request (a job falling due later) leaves its little garbage to
// V8's own collections.

import type { Server } from 'node:http';
import { setFlagsFromString } from 'node:v8';
import { fullCollection, youngGenerationSize } from './full-collection.js';

/** How long without a request before a collection may run. */
export const IDLE_COLLECT_INTERVAL_MS = 1000;
/** How much the heap must have grown since the last full collection for another to run. */
export const IDLE_COLLECT_GROWTH_BYTES = 32 * 1024 * 1024;
/**
 * After how many quiet intervals in a row (no activity, no collection) the young generation is
 * made small again. V8 shrinks it when little was allocated over the five seconds before the
 * collection (measured on Node 20: a full collection 4.5 s after the one before kept the 33 MB
 * young generation, one 5.5 s after it brought it to 1 MB).
 */
export const IDLE_SETTLE_INTERVALS = 6;
/** The young generation's size above which the settling collection runs. */
export const YOUNG_SETTLE_BYTES = 8 * 1024 * 1024;

export interface IdleCollectorSources {
  /** How much work has come so far: requests that arrived, jobs that ran. */
  activity(): number;
  /**
   * The heap's size now: what it holds from the system (V8's heapTotal), garbage and free
   * space in its pages included. Its used bytes would not do: a collection V8 ran by itself
   * lowers them but leaves the pages held.
   */
  heapSize(): number;
  /** Runs one full collection, compacting. */
  collect(): void;
  growthBytes?: number;
  /** The young generation's size: what it holds from the system. */
  youngSize?: () => number;
  /** Runs one full collection, compacting, in which V8 may shrink the young generation. */
  settle?: () => void;
}

/** What a tick did. */
export type IdleWork = 'collected' | 'settled' | undefined;

/**
 * The decision, apart from any timer: `tick()` is called once per interval. It collects when
 * no activity came since the tick before and the heap grew enough. It settles when neither
 * activity nor a collection came for `IDLE_SETTLE_INTERVALS` ticks and the young generation is
 * still large, once per idle stretch: V8 measures the allocation since its last collection,
 * so the compacting one counts as a burst too.
 */
export function idleCollector(sources: IdleCollectorSources) {
  const growth = sources.growthBytes ?? IDLE_COLLECT_GROWTH_BYTES;
  let activitySeen = sources.activity();
  let sizeAfterCollect = sources.heapSize();
  /** Ticks in a row with no activity and no collection. */
  let quietTicks = 0;
  return {
    /**
     * Nothing is left to do until activity comes: the idle stretch has lasted past the
     * young generation's settling. The ticks may stop meanwhile (an idle server then wakes
     * for nothing); a tick after activity finds the heap as before.
     */
    get resting(): boolean {
      return quietTicks > IDLE_SETTLE_INTERVALS;
    },
    tick(): IdleWork {
      const activity = sources.activity();
      const idle = activity === activitySeen;
      activitySeen = activity;
      if (!idle) {
        quietTicks = 0;
        return undefined;
      }
      if (sources.heapSize() - sizeAfterCollect >= growth) {
        sources.collect();
        sizeAfterCollect = sources.heapSize();
        quietTicks = 0;
        return 'collected';
      }
      quietTicks++;
      if (
        quietTicks === IDLE_SETTLE_INTERVALS &&
        sources.settle !== undefined &&
        (sources.youngSize?.() ?? 0) > YOUNG_SETTLE_BYTES
      ) {
        sources.settle();
        sizeAfterCollect = Math.min(sizeAfterCollect, sources.heapSize());
        return 'settled';
      }
      return undefined;
    },
  };
}

export { youngGenerationSize };

/** V8's memory reducer runs one collection where it would run two or three (see the header). */
export function oneReducerCollection(): void {
  setFlagsFromString('--memory-reducer-single-gc');
}

/**
 * Collects the heap's garbage whenever `server` has been idle for an interval after growth,
 * and settles the young generation after a longer idle stretch. `sources` replace the heap's
 * figures or the collections (tests); `stop` ends it. The server calls `oneReducerCollection`
 * beside it.
 */
export function collectGarbageWhenIdle(
  server: Server,
  intervalMs = IDLE_COLLECT_INTERVAL_MS,
  sources: Partial<Omit<IdleCollectorSources, 'activity'>> = {},
  /** Work other than requests that keeps the server busy (the job runner's runs). */
  backgroundWork: () => number = () => 0,
) {
  let requests = 0;
  let timer: NodeJS.Timeout | undefined;
  const arm = () => {
    timer = setInterval(() => {
      collector.tick();
      // At rest: the ticks stop until the next request (see the header of resting).
      if (collector.resting) {
        clearInterval(timer);
        timer = undefined;
      }
    }, intervalMs);
    timer.unref();
  };
  const onRequest = () => {
    requests++;
    if (timer === undefined) arm();
  };
  server.on('request', onRequest);
  const collector = idleCollector({
    activity: () => requests + backgroundWork(),
    heapSize: sources.heapSize ?? (() => process.memoryUsage().heapTotal),
    // Made callable on first use: a new V8 context is not free, and start-up is measured.
    collect: sources.collect ?? fullCollection,
    growthBytes: sources.growthBytes,
    youngSize: sources.youngSize ?? youngGenerationSize,
    settle: sources.settle ?? fullCollection,
  });
  arm();
  return {
    tick: () => collector.tick(),
    /** Whether the ticks run now (they stop at rest, and start again with a request). */
    get ticking(): boolean {
      return timer !== undefined;
    },
    stop() {
      clearInterval(timer);
      timer = undefined;
      server.off('request', onRequest);
    },
  };
}
