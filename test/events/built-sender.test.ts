// The webhook sender as it ships: the built server (dist/main.js) loads its sender thread from
// dist/send-worker.js, a bundle of its own with undici inside. The other webhook tests run the
// sources, so this is the one place a bundle that cannot load would show.

import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { startServer, type ServerProcess } from '../fixtures/server.js';
import { type Receiver, startReceiver } from './support.js';

describe('the built server', () => {
  let server: ServerProcess | undefined;
  let receiver: Receiver | undefined;
  afterAll(async () => {
    await receiver?.close();
    await server?.kill('SIGKILL');
  });

  it('delivers signed webhooks from its bundled sender thread', async () => {
    server = await startServer({ DATA_DIR: mkdtempSync(join(tmpdir(), 'railyard-built-sender-')) });
    receiver = await startReceiver(await server.webhookPublicKey());
    // Setting the endpoint sends a test event; a second one comes on request.
    expect((await server.request('PATCH', '/config', { webhookEndpoint: receiver.url })).status).toBe(200);
    expect((await server.request('POST', '/sandbox/webhooks/test')).status).toBe(200);
    await receiver.waitFor(2, 10_000);
    expect(receiver.hits.map((hit) => [hit.type, hit.signatureValid])).toEqual([
      ['TEST', true],
      ['TEST', true],
    ]);
  });
});
