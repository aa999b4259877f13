// Once a burst of requests is over, the server collects its heap's garbage (src/memory.ts).

import { execFile } from 'node:child_process';
import type { Server } from 'node:http';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import {
  collectGarbageWhenIdle,
  IDLE_SETTLE_INTERVALS,
  idleCollector,
  YOUNG_SETTLE_BYTES,
  youngGenerationSize,
} from '../../src/memory.js';
import { burst } from './young-generation-settle.mjs';
import { until } from '../fixtures/until.js';
import { build } from '../helper.js';

const run = promisify(execFile);
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

  it('rests once the idle stretch has run its course, and ticks again with the next request', async () => {
    let requests = 0;
    let heap = 100 * MB;
    const collector = idleCollector({
      activity: () => requests,
      heapSize: () => heap,
      collect: () => {
        heap = 60 * MB;
      },
      growthBytes: 32 * MB,
    });
    heap = 140 * MB;
    expect(collector.tick()).toBe('collected');
    // Quiet ticks up to and through the settling step: not at rest yet.
    for (let i = 0; i < IDLE_SETTLE_INTERVALS; i++) {
      expect(collector.resting).toBe(false);
      collector.tick();
    }
    collector.tick();
    expect(collector.resting).toBe(true);
    requests++;
    collector.tick();
    expect(collector.resting).toBe(false);

    // Over HTTP: the timer stops at rest (an idle server wakes for nothing), and a request starts it again.
    const t = await build();
    await t.app.listen({ host: '127.0.0.1', port: 0 });
    const address = t.app.server.address();
    const port = typeof address === 'object' && address !== null ? address.port : 0;
    const idle = collectGarbageWhenIdle(t.app.server, 5, { heapSize: () => 0, collect: () => {}, settle: () => {} });
    try {
      expect(idle.ticking).toBe(true);
      await until('the idle collector comes to rest', () => !idle.ticking);
      const reply = await fetch(`http://127.0.0.1:${port}/health`);
      await reply.arrayBuffer();
      expect(idle.ticking).toBe(true);
      await until('the idle collector comes to rest again', () => !idle.ticking);
    } finally {
      idle.stop();
      await t.close();
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

  it("settles with V8's own young generation and collections when nothing replaces them", () => {
    burst();
    expect(youngGenerationSize()).toBeGreaterThan(YOUNG_SETTLE_BYTES);
    let heap = 0;
    const idle = collectGarbageWhenIdle(quietServer, 3_600_000, { heapSize: () => heap, growthBytes: MB });
    try {
      heap = 100 * MB;
      expect(idle.tick()).toBe('collected');
      for (let i = 1; i < IDLE_SETTLE_INTERVALS; i++) expect(idle.tick()).toBeUndefined();
      // The young generation was still large (it shrinks only after a quiet stretch, below).
      expect(idle.tick()).toBe('settled');
    } finally {
      idle.stop();
    }
  });

  it("brings V8's young generation back down once allocation has been quiet for a while", async () => {
    // In a process of its own: V8 measures the allocation of the whole heap, and this worker
    // runs other test files, whose leftovers once kept it from shrinking here (Node 22, CI).
    // V8 shrinks it in a full collection that finds little allocated since the one before,
    // five seconds or more earlier: the wait stands for the quiet intervals the timer counts.
    const { stdout } = await run(process.execPath, [join(__dirname, 'young-generation-settle.mjs'), '6000']);
    const sizes = JSON.parse(stdout) as { afterBurst: number; afterCompaction: number; afterSettle: number };
    expect(sizes.afterBurst).toBeGreaterThan(YOUNG_SETTLE_BYTES);
    // The compacting collection comes too soon after the burst to shrink it.
    expect(sizes.afterCompaction).toBeGreaterThan(YOUNG_SETTLE_BYTES);
    expect(sizes.afterSettle).toBeLessThanOrEqual(YOUNG_SETTLE_BYTES);
  }, 20_000);
});
