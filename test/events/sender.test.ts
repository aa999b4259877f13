// The webhook sender's thread is ended when it is idle after a burst (its memory then goes
// back to the system at once), never while a send is under way; the next send starts a new
// thread and keeps the order of its key.

import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { post, retireIdleSender } from '../../src/events/sender.js';

const servers: ReturnType<typeof createServer>[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => new Promise((resolve) => s.close(resolve))));
});

/** A receiver that notes each body, answering after `delayMs`. */
async function receiver(delayMs = 0) {
  const bodies: string[] = [];
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      bodies.push(Buffer.concat(chunks).toString('utf8'));
      setTimeout(() => response.writeHead(200).end(), delayMs);
    });
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`, bodies };
}

const send = (url: string, body: string) =>
  post(url, Buffer.from(body), { 'content-type': 'text/plain' }, { timeoutMs: 5_000, orderKey: 'one resource' });

describe('retiring the idle webhook sender', () => {
  it('ends the thread once it has made enough sends and has none under way; the next send starts another', async () => {
    const target = await receiver();
    for (const body of ['a', 'b', 'c']) expect((await send(target.url, body)).answer?.status).toBe(200);
    // Fewer sends than the bound: the thread stays.
    expect(retireIdleSender(4)).toBe(false);
    expect(retireIdleSender(3)).toBe(true);
    // Nothing left to end.
    expect(retireIdleSender(0)).toBe(false);
    const results = await Promise.all(['d', 'e', 'f'].map((body) => send(target.url, body)));
    for (const result of results) expect(result.answer?.status).toBe(200);
    expect(target.bodies).toEqual(['a', 'b', 'c', 'd', 'e', 'f']);
  });

  it('keeps the thread while a send waits for its answer', async () => {
    const slow = await receiver(300);
    const pending = send(slow.url, 'slow');
    expect(retireIdleSender(0)).toBe(false);
    expect((await pending).answer?.status).toBe(200);
    expect(retireIdleSender(0)).toBe(true);
  });
});
