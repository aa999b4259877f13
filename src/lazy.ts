// Packages loaded on first use instead of at start-up. The cryptography of embedded wallets
// and passkeys takes about as long to load as the rest of the server, and most runs of
// railyard never use it, nor the PostgreSQL driver on the embedded store: loading them when
// first needed keeps start-up short. The packages ship CommonJS builds, so the load is
// synchronous and the callers stay as they are.

import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);

/** A function answering the package `name`, loaded the first time it is called. */
export function onFirstUse<T>(name: string): () => T {
  let loaded: T | undefined;
  return () => {
    loaded ??= require(name) as T;
    return loaded;
  };
}
