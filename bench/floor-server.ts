// What the floors share (bench/floor.ts on the embedded store, bench/floor-pg.ts on
// PostgreSQL): the bare Fastify server with its routes, each checking the Authorization
// header against FLOOR_AUTH before anything else, the "floor listening <address>" line the
// bench waits for, and SIGTERM, which closes the server, then the store, then exits. Also the
// ids the floors write (time-ordered and as long as railyard's, without its generator's cost).

import { randomUUID } from 'node:crypto';
import Fastify from 'fastify';

export interface FloorRoute {
  path: string;
  /** The JSON schema of the body: the floor's only validation. */
  body: object;
  /** The successful answer's status. */
  status: number;
  /** Runs the route's statements; resolves with the answer's JSON text. */
  handle(body: any, idempotencyKey: string | undefined): Promise<string>;
}

/** Serves `routes` on a port of the system's choosing; on SIGTERM closes them, then `close`. */
export async function serveFloor(routes: FloorRoute[], close: () => unknown): Promise<void> {
  const auth = process.env.FLOOR_AUTH ?? '';
  const app = Fastify({ logger: false });
  for (const route of routes) {
    app.post(route.path, { schema: { body: route.body } }, async (request, reply) => {
      if (request.headers.authorization !== auth) return reply.code(401).send({ code: 'UNAUTHORIZED' });
      const key = request.headers['idempotency-key'];
      const payload = await route.handle(request.body, typeof key === 'string' ? key : undefined);
      return reply.code(route.status).type('application/json; charset=utf-8').send(payload);
    });
  }
  const address = await app.listen({ host: '127.0.0.1', port: 0 });
  process.stdout.write(`floor listening ${address}\n`);
  process.on(
    'SIGTERM',
    () =>
      void app.close().then(async () => {
        await close();
        process.exit(0);
      }),
  );
}

const accountRef = { type: 'object', required: ['accountId'], properties: { accountId: { type: 'string' } } } as const;

/** The body of the transfer-out floors (the bench sends one cent between the same accounts). */
export interface TransferOutBody {
  source: { accountId: string };
  destination: { accountId: string };
  amount: number;
}
export const transferOutBody = {
  type: 'object',
  required: ['source', 'destination', 'amount'],
  properties: { source: accountRef, destination: accountRef, amount: { type: 'integer', minimum: 1 } },
} as const;

let sequence = Date.now() * 1000;
/** A new id of railyard's shape and size (`Type:` and a 36-character UUID), ordered by creation. */
export function newId(type: string): string {
  const time = (sequence++).toString(16).padStart(12, '0').slice(-12);
  return `${type}:${time.slice(0, 8)}-${time.slice(8)}-7000-8000-${randomUUID().slice(-12)}`;
}
