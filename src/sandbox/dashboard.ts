// The dashboard's page and bundle, served at /_railyard/dashboard by the same process. The
// front end (dashboard/, built into dist/dashboard/ by scripts/build.mjs) is static: it holds
// no data and needs no credentials to load; everything it shows it reads in the browser
// through the authenticated Grid API and /_railyard endpoints, with the credentials the user
// signs in with. So these routes carry no operation schema: they take no credentials and are
// not operations of the OpenAPI document.

import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FastifyPluginAsync } from 'fastify';
import { ADMIN_PREFIX } from '../config.js';

const ASSETS = { 'app.js': 'text/javascript; charset=utf-8', 'app.css': 'text/css; charset=utf-8' } as const;
type AssetName = keyof typeof ASSETS;

/**
 * Where the built bundle is: beside the server bundle (dist/main.js → dist/dashboard), or,
 * when the server runs from source (the tests), in the project's dist/.
 */
function assetsDir(): string | undefined {
  const here = dirname(fileURLToPath(import.meta.url));
  const candidates = [join(here, 'dashboard'), join(here, '../../dist/dashboard')];
  return candidates.find((dir) => existsSync(join(dir, 'app.js')));
}

// note: the page loads nothing but its own two files, and reads only this server.
const CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

function page(): string {
  const base = `${ADMIN_PREFIX}/dashboard`;
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="icon" href="data:,">
<title>railyard dashboard</title>
<link rel="stylesheet" href="${base}/app.css">
<script type="module" src="${base}/app.js"></script>
</head>
<body>
<div id="app"><noscript>The railyard dashboard needs JavaScript.</noscript></div>
</body>
</html>
`;
}

const MISSING = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>railyard dashboard</title></head><body>
<h1>The dashboard is not built</h1><p>Run <code>npm run build</code> (or <code>npm start</code>, which builds first) and reload.</p>
</body></html>`;

export const dashboardRoutes: FastifyPluginAsync = async (app) => {
  const serveIndex = async (_request: unknown, reply: import('fastify').FastifyReply) => {
    const built = assetsDir() !== undefined;
    reply
      .code(built ? 200 : 503)
      .type('text/html; charset=utf-8')
      .header('cache-control', 'no-cache')
      .header('content-security-policy', CONTENT_SECURITY_POLICY)
      .header('x-content-type-options', 'nosniff')
      .header('referrer-policy', 'no-referrer');
    return built ? page() : MISSING;
  };
  app.get('/dashboard', serveIndex);
  app.get('/dashboard/', serveIndex);

  for (const name of Object.keys(ASSETS) as AssetName[]) {
    // Read on each request (two small files), so a rebuild shows without a restart.
    app.get(`/dashboard/${name}`, async (_request, reply) => {
      const dir = assetsDir();
      if (dir === undefined) {
        reply.code(404);
        return { status: 404, code: 'REFERENCE_NOT_FOUND', message: 'The dashboard is not built (npm run build)' };
      }
      const body = await readFile(join(dir, name));
      reply.type(ASSETS[name]).header('cache-control', 'no-cache').header('x-content-type-options', 'nosniff');
      return body;
    });
  }
};
