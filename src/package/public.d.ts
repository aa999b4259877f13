// The declarations the railyard package ships (scripts/build.mjs copies this file to
// dist/index.d.ts, and types.ts to dist/types.d.ts). src/package/index.ts checks that its
// exports match them.

export * from './types.js';

import type { RailyardErrorFields, StartRailyard } from './types.js';

/**
 * Starts railyard in this process, on a port of its own, with a first platform:
 * `const railyard = await startRailyard(); … await railyard.close();`
 */
export declare const startRailyard: StartRailyard;

/** An answer outside 2xx from one of the helpers: its status, and the error envelope's code, message and details. */
export declare class RailyardError extends Error implements RailyardErrorFields {
  readonly status: number;
  readonly code: string;
  readonly details?: unknown;
  constructor(status: number, code: string, message: string, details?: unknown);
}
