// Once a burst of requests is over, the server collects its heap's garbage (src/memory.ts).

import { describe, expect, it } from 'vitest';
import { collectGarbageWhenIdle, idleCollector } from '../../src/memory.js';
import { build } from '../helper.js';

const MB = 1024 * 1024;

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
    expect(collector.tick()).toBe(false);
    // Idle for the interval that follows: one collection.
    expect(collector.tick()).toBe(true);
    expect(collections).toBe(1);
    // Still idle, the heap as the collection left it: nothing to do.
    expect(collector.tick()).toBe(false);
    // Idle, but grown by less than the bound since the collection.
    heap = 80 * MB;
    expect(collector.tick()).toBe(false);
    // A new burst grows it past the bound: collected once the burst is over.
    heap = 95 * MB;
    requests++;
    expect(collector.tick()).toBe(false);
    expect(collector.tick()).toBe(true);
    expect(collections).toBe(2);
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
      expect(idle.tick()).toBe(false);
      expect(collections).toBe(0);
      expect(idle.tick()).toBe(true);
      expect(collections).toBe(1);
    } finally {
      idle.stop();
      await t.close();
    }
  });

  it('counts background work (jobs run) as activity, not only requests', () => {
    const server = { on() {}, off() {} } as unknown as import('node:http').Server;
    let heap = 10 * MB;
    let jobs = 0;
    let collections = 0;
    const idle = collectGarbageWhenIdle(
      server,
      3_600_000,
      { heapSize: () => heap, collect: () => void collections++, growthBytes: MB },
      () => jobs,
    );
    try {
      // Grown while webhook deliveries still run after the last request: not yet.
      heap = 50 * MB;
      jobs += 40;
      expect(idle.tick()).toBe(false);
      jobs += 1;
      expect(idle.tick()).toBe(false);
      expect(collections).toBe(0);
      // A whole interval with no job either: now.
      expect(idle.tick()).toBe(true);
      expect(collections).toBe(1);
    } finally {
      idle.stop();
    }
  });

  it('runs V8 full collection when nothing replaces it', () => {
    const server = { on() {}, off() {} } as unknown as import('node:http').Server;
    let heap = 0;
    const idle = collectGarbageWhenIdle(server, 3_600_000, { heapSize: () => heap, growthBytes: 1 });
    try {
      heap = 10;
      // The real collection: V8's gc, made callable at run time.
      expect(idle.tick()).toBe(true);
    } finally {
      idle.stop();
    }
  });
});
