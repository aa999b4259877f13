// One pipeline for writes that accept an Idempotency-Key. In one transaction: claim the
// key (platform, operation, key) with a hash of the request, run the command, store the
// response bytes, commit. A repeat with the same request gets the stored status and bytes
// and changes nothing; a repeat with another request is refused; two concurrent requests
// with one key produce one effect (the second waits on the key, then replays the first).

import type { FastifyReply } from 'fastify';
import { sha256Hex } from '../crypto/digest.js';
import { iso } from '../clock.js';
import { isUniqueViolation, type Tx } from '../db/index.js';
import { claimRecord, completeRecord, findRecord, type StoredResponse } from '../db/idempotency.js';
import { type PrefetchRead, prefetch } from '../db/prefetch.js';
import { writtenText } from '../json.js';
import type { Ctx } from './context.js';
import { apiError, type ErrorCode } from './errors.js';

export interface CommandResult {
  status: number;
  body: unknown;
}

/** A response as bytes, sent as is (so a replay is byte for byte the first answer). */
export interface Reply {
  status: number;
  payload: string;
  replayed: boolean;
}

export interface CommandSpec {
  operationId: string;
  idempotencyKey: string | undefined;
  /** Everything that defines the request: path parameters and body. */
  request: unknown;
  /** The code for a key reused with another request: 409 CONFLICT where declared, else 400. */
  conflictCode?: Extract<ErrorCode, 'CONFLICT' | 'INVALID_INPUT'>;
  /**
   * Rows the command reads first, named by the request alone: on PostgreSQL they are read
   * in one statement with the key's claim (or at the start of the transaction without a
   * key), so the command's own reads of them cost no round trip (see db/prefetch.ts).
   */
  reads?: readonly PrefetchRead[];
}

// note: the hash must stay the same text for the same request across versions (stored keys
// are compared with it), including the order JSON.stringify gives integer-like keys, which an
// object puts first whatever the insertion order; so the canonical form is an object again.
// A key such as `__proto__` from a request is an own member of the copy: it has no prototype.
export function canonical(value: unknown): unknown {
  if (value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map(canonical);
  const record = value as Record<string, unknown>;
  const copy: Record<string, unknown> = Object.create(null);
  for (const key of Object.keys(record).sort()) {
    const item = record[key];
    if (item !== undefined) copy[key] = canonical(item);
  }
  return copy;
}

export function requestHash(operationId: string, request: unknown): string {
  return sha256Hex(JSON.stringify([operationId, canonical(request)]));
}

function keyReused(spec: CommandSpec) {
  const message = 'This Idempotency-Key was already used with a different request';
  const details = { errors: [{ field: 'Idempotency-Key', message: 'was already used with a different request' }] };
  return apiError(spec.conflictCode ?? 'INVALID_INPUT', message, details);
}

function replay(spec: CommandSpec, stored: StoredResponse, hash: string): Reply {
  if (stored.requestHash !== hash) throw keyReused(spec);
  return { status: stored.status, payload: stored.body, replayed: true };
}

const keyWaitAttemptsMax = 20;

export async function runCommand(ctx: Ctx, spec: CommandSpec, fn: (tx: Tx) => Promise<CommandResult>): Promise<Reply> {
  const key = spec.idempotencyKey;
  if (key === undefined) {
    const reads = spec.reads;
    const result = await ctx.db.transaction(
      reads === undefined
        ? fn
        : async (tx) => {
            await prefetch(tx, reads);
            return fn(tx);
          },
    );
    return { status: result.status, payload: writtenText(result.body), replayed: false };
  }
  const hash = requestHash(spec.operationId, spec.request);
  try {
    return await ctx.db.transaction(async (tx) => {
      // Claimed first, so a concurrent request with this key waits here instead of
      // repeating the work; a key with a record replays it.
      if (!(await claimRecord(tx, ctx.platformId, spec.operationId, key, hash, iso(ctx.now), spec.reads))) {
        const stored = await findRecord(tx, ctx.platformId, spec.operationId, key);
        if (stored === undefined) throw new Error(`idempotency key ${key} has a record that cannot be read`);
        return replay(spec, stored, hash);
      }
      const result = await fn(tx);
      const payload = writtenText(result.body);
      await completeRecord(tx, ctx.platformId, spec.operationId, key, result.status, payload);
      return { status: result.status, payload, replayed: false };
    });
  } catch (err) {
    if (!isUniqueViolation(err)) throw err;
    // Another request with this key committed first: answer with its response.
    for (let attempt = 0; attempt < keyWaitAttemptsMax; attempt++) {
      const stored = await findRecord(ctx.db.k, ctx.platformId, spec.operationId, key);
      if (stored !== undefined && stored.status !== 0) return replay(spec, stored, hash);
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    throw err;
  }
}

export function sendReply(reply: FastifyReply, result: Reply): FastifyReply {
  if (result.replayed) reply.header('idempotent-replayed', 'true');
  return reply.code(result.status).type('application/json; charset=utf-8').send(result.payload);
}
