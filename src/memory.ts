// Giving memory back once a burst of load is over. Under load, objects that live for the
// length of a request (held across a group commit, a webhook send) are promoted out of V8's
// young generation and die in the old one, which V8 collects only when it reaches a limit set
// from the last collection: after the bench's scenarios, about 80 MB of the main heap was
// such garbage, kept for as long as the server stays idle (measured: no collection in 30 s
// of idleness). A long-lived shared instance would hold it between bursts. So once no request
// has come and no job has run for a whole interval (webhook deliveries may go on for seconds
// after the last request), and the heap has grown by a set amount since the last full
// collection, one full collection runs, compacting (tens of milliseconds, on an idle server).

import type { Server } from 'node:http';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

/** How long without a request before a collection may run. */
export const IDLE_COLLECT_INTERVAL_MS = 1000;
/** How much the heap must have grown since the last full collection for another to run. */
export const IDLE_COLLECT_GROWTH_BYTES = 32 * 1024 * 1024;

export interface IdleCollectorSources {
  /** How much work has come so far: requests that arrived, jobs that ran. */
  activity(): number;
  /**
   * The heap's size now: what it holds from the system (V8's heapTotal), garbage and free
   * space in its pages included. Its used bytes would not do: a collection V8 ran by itself
   * lowers them but leaves the pages held.
   */
  heapSize(): number;
  /** Runs one full collection. */
  collect(): void;
  growthBytes?: number;
}

/**
 * The decision, apart from any timer: `tick()` is called once per interval and collects when
 * no activity came since the tick before and the heap grew enough. Returns whether it did.
 */
export function idleCollector(sources: IdleCollectorSources) {
  const growth = sources.growthBytes ?? IDLE_COLLECT_GROWTH_BYTES;
  let activitySeen = sources.activity();
  let sizeAfterCollect = sources.heapSize();
  return {
    tick(): boolean {
      const activity = sources.activity();
      const idle = activity === activitySeen;
      activitySeen = activity;
      if (!idle || sources.heapSize() - sizeAfterCollect < growth) return false;
      sources.collect();
      sizeAfterCollect = sources.heapSize();
      return true;
    },
  };
}

let fullCollection: (() => void) | undefined;

/**
 * V8's full collection, made callable once (the same as starting Node with --expose-gc), with
 * compaction: a plain full collection frees the garbage but keeps the pages it was spread
 * over (measured after the bench: 73 MB used became 27, the heap's 94 MB stayed 86, and so
 * did the RSS), so the objects still live are moved together and the emptied pages go back.
 */
function fullCollectionFunction(): () => void {
  if (fullCollection === undefined) {
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    fullCollection = () => {
      setFlagsFromString('--compact-on-every-full-gc');
      try {
        gc();
      } finally {
        setFlagsFromString('--no-compact-on-every-full-gc');
      }
    };
  }
  return fullCollection;
}

/**
 * Collects the heap's garbage whenever `server` has been idle for an interval after growth.
 * `overrides` replace the heap's figures or the collection (tests); `stop` ends it.
 */
export function collectGarbageWhenIdle(
  server: Server,
  intervalMs = IDLE_COLLECT_INTERVAL_MS,
  overrides: Partial<Omit<IdleCollectorSources, 'activity'>> = {},
  /** Work other than requests that keeps the server busy (the job runner's runs). */
  backgroundWork: () => number = () => 0,
) {
  let requests = 0;
  const onRequest = () => {
    requests++;
  };
  server.on('request', onRequest);
  const collector = idleCollector({
    activity: () => requests + backgroundWork(),
    heapSize: overrides.heapSize ?? (() => process.memoryUsage().heapTotal),
    // Made callable on first use: a new V8 context is not free, and start-up is measured.
    collect: overrides.collect ?? (() => fullCollectionFunction()()),
    growthBytes: overrides.growthBytes,
  });
  const timer = setInterval(() => collector.tick(), intervalMs);
  timer.unref();
  return {
    tick: () => collector.tick(),
    stop() {
      clearInterval(timer);
      server.off('request', onRequest);
    },
  };
}
