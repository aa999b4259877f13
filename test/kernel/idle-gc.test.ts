// Once a burst of requests is over, the server collects its heap's garbage (src/memory.ts).

import { describe, expect, it } from 'vitest';
import type { Server } from 'node:http';
import { collectGarbageWhenIdle, IDLE_SETTLE_INTERVALS, idleCollector, youngGenerationSize } from '../../src/memory.js';
import { build } from '../helper.js';

const MB = 1024 * 1024;
/** A server that never has a request: the ticks are called by the test. */
const quietServer = { on() {}, off() {} } as unknown as Server;

describe('collecting garbage when idle', () => {
  it('collects only after a whole interval without requests, and only when the heap grew', () => {
    let requests = 0;
    let heap = 100 * MB;
    let collections = 0;
    const collector = idleCollector({
      activity: () => requests,
      heapSize: () => heap,
      collect: () => {
        collections++;
        heap = 60 * MB;
      },
      growthBytes: 32 * MB,
    });
    // Grown since the start, but requests came during the interval: not now.
    heap = 140 * MB;
    requests += 3;
    expect(collector.tick()).toBeUndefined();
    // Idle for the interval that follows: one collection.
    expect(collector.tick()).toBe('collected');
    expect(collections).toBe(1);
    // Still idle, the heap as the collection left it: nothing to do.
    expect(collector.tick()).toBeUndefined();
    // Idle, but grown by less than the bound since the collection.
    heap = 80 * MB;
    expect(collector.tick()).toBeUndefined();
    // A new burst grows it past the bound: collected once the burst is over.
    heap = 95 * MB;
    requests++;
    expect(collector.tick()).toBeUndefined();
    expect(collector.tick()).toBe('collected');
    expect(collections).toBe(2);
  });

  it('settles a large young generation once, after enough quiet intervals since the last activity or collection', () => {
    let requests = 0;
    let heap = 100 * MB;
    let young = 33 * MB;
    const done: string[] = [];
    const collector = idleCollector({
      activity: () => requests,
      heapSize: () => heap,
      collect: () => {
        done.push('collect');
        heap = 60 * MB;
      },
      growthBytes: 32 * MB,
      youngSize: () => young,
      settle: () => {
        done.push('settle');
        young = 1 * MB;
        heap -= 32 * MB;
      },
    });
    // A burst, then the interval after it: the compacting collection.
    heap = 140 * MB;
    requests++;
    expect(collector.tick()).toBeUndefined();
    expect(collector.tick()).toBe('collected');
    // Quiet intervals counted from that collection: the settling comes at the set number.
    for (let i = 1; i < IDLE_SETTLE_INTERVALS; i++) expect(collector.tick()).toBeUndefined();
    expect(collector.tick()).toBe('settled');
    expect(done).toEqual(['collect', 'settle']);
    // Once per idle stretch, however long it lasts.
    young = 33 * MB;
    for (let i = 0; i < 2 * IDLE_SETTLE_INTERVALS; i++) expect(collector.tick()).toBeUndefined();
    // Activity starts the count again; a small young generation is left alone.
    requests++;
    expect(collector.tick()).toBeUndefined();
    young = 2 * MB;
    for (let i = 0; i < 2 * IDLE_SETTLE_INTERVALS; i++) expect(collector.tick()).toBeUndefined();
    expect(done).toEqual(['collect', 'settle']);
    // A large one is settled after the next quiet stretch.
    requests++;
    young = 33 * MB;
    expect(collector.tick()).toBeUndefined();
    for (let i = 1; i < IDLE_SETTLE_INTERVALS; i++) expect(collector.tick()).toBeUndefined();
    expect(collector.tick()).toBe('settled');
    expect(done).toEqual(['collect', 'settle', 'settle']);
  });

  it('counts the requests that reach the server over HTTP', async () => {
    const t = await build();
    await t.app.listen({ host: '127.0.0.1', port: 0 });
    const address = t.app.server.address();
    const port = typeof address === 'object' && address !== null ? address.port : 0;
    let heap = 10 * MB;
    let collections = 0;
    // The interval is left to the test: the timer itself never fires here.
    const idle = collectGarbageWhenIdle(t.app.server, 3_600_000, {
      heapSize: () => heap,
      collect: () => {
        collections++;
      },
      growthBytes: MB,
    });
    try {
      heap = 50 * MB;
      const reply = await fetch(`http://127.0.0.1:${port}/health`);
      expect(reply.status).toBe(200);
      await reply.arrayBuffer();
      expect(idle.tick()).toBeUndefined();
      expect(collections).toBe(0);
      expect(idle.tick()).toBe('collected');
      expect(collections).toBe(1);
    } finally {
      idle.stop();
      await t.close();
    }
  });

  it('counts background work (jobs run) as activity, not only requests', () => {
    let heap = 10 * MB;
    let jobs = 0;
    let collections = 0;
    const idle = collectGarbageWhenIdle(
      quietServer,
      3_600_000,
      { heapSize: () => heap, collect: () => void collections++, growthBytes: MB },
      () => jobs,
    );
    try {
      // Grown while webhook deliveries still run after the last request: not yet.
      heap = 50 * MB;
      jobs += 40;
      expect(idle.tick()).toBeUndefined();
      jobs += 1;
      expect(idle.tick()).toBeUndefined();
      expect(collections).toBe(0);
      // A whole interval with no job either: now.
      expect(idle.tick()).toBe('collected');
      expect(collections).toBe(1);
    } finally {
      idle.stop();
    }
  });

  it('runs V8 full collection when nothing replaces it', () => {
    let heap = 0;
    const idle = collectGarbageWhenIdle(quietServer, 3_600_000, { heapSize: () => heap, growthBytes: 1 });
    try {
      heap = 10;
      // The real collection: V8's gc, made callable at run time.
      expect(idle.tick()).toBe('collected');
    } finally {
      idle.stop();
    }
  });

  it("brings V8's young generation back down once allocation has been quiet for a while", async () => {
    // A burst of objects that live a little: V8 grows its young generation for them.
    let kept: object[] = [];
    for (let i = 0; i < 2_000_000; i++) {
      kept.push({ i, name: `item ${i}`, pair: [i, i] });
      if (kept.length > 20_000) kept = kept.slice(10_000);
    }
    kept = [];
    expect(youngGenerationSize()).toBeGreaterThan(8 * MB);
    let heap = 0;
    const idle = collectGarbageWhenIdle(quietServer, 3_600_000, { heapSize: () => heap, growthBytes: MB });
    try {
      // The burst is over: the compacting collection, as on the server.
      heap = 100 * MB;
      expect(idle.tick()).toBe('collected');
      // V8 shrinks it in a full collection that finds little allocated since the one before,
      // five seconds or more earlier: the wait stands for the quiet intervals the timer counts.
      await new Promise((resolve) => setTimeout(resolve, 6_000));
      for (let i = 1; i < IDLE_SETTLE_INTERVALS; i++) expect(idle.tick()).toBeUndefined();
      expect(idle.tick()).toBe('settled');
      expect(youngGenerationSize()).toBeLessThanOrEqual(8 * MB);
    } finally {
      idle.stop();
    }
  }, 20_000);
});
