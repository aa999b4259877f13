// The baseline: a bare Fastify server doing the least work an HTTP JSON API can do.
import Fastify from 'fastify';

const app = Fastify({ logger: false });
app.get('/ping', async () => ({ ok: true }));
app.post('/echo', async (request) => request.body);
const address = await app.listen({ host: '127.0.0.1', port: Number(process.env.PORT ?? 0) });
process.stdout.write(`baseline listening ${address}\n`);
process.on('SIGTERM', () => void app.close().then(() => process.exit(0)));
