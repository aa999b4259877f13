import { randomBytes } from 'node:crypto';
import { iso } from '../../clock.js';
import type { Queryable } from '../../db/index.js';
import { toPage } from '../../db/pagination.js';
import { hashSecret, newSalt } from '../../http/auth.js';
import type { Ctx } from '../../http/context.js';
import type { Permission } from '../../http/deps.js';
import { apiError } from '../../http/errors.js';
import { newId } from '../../ids.js';
import * as store from './store.js';

export interface ApiTokenView {
  id: string;
  name: string;
  permissions: Permission[];
  clientId: string;
  clientSecret?: string;
  createdAt: string;
  updatedAt: string;
}

function present(row: store.TokenRow, clientSecret?: string): ApiTokenView {
  return {
    id: row.id,
    name: row.name,
    permissions: JSON.parse(row.permissions) as Permission[],
    clientId: row.client_id,
    ...(clientSecret !== undefined ? { clientSecret } : {}),
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

export interface IssueTokenInput {
  platformId: string;
  name: string;
  permissions: Permission[];
  now: Date;
  /** Pinned credentials (GRID_CLIENT_ID / GRID_CLIENT_SECRET); random when absent. */
  clientId?: string | undefined;
  clientSecret?: string | undefined;
}

/** Creates a token and returns it with its secret, the only time the secret is visible. */
export async function issueToken(q: Queryable, input: IssueTokenInput): Promise<ApiTokenView> {
  const secret = input.clientSecret ?? randomBytes(24).toString('hex');
  const salt = newSalt();
  const now = iso(input.now);
  const row: store.TokenRow = {
    id: newId('Token'),
    platform_id: input.platformId,
    name: input.name,
    permissions: JSON.stringify(input.permissions),
    client_id: input.clientId ?? randomBytes(16).toString('hex'),
    secret_salt: salt,
    secret_hash: hashSecret(secret, salt),
    created_at: now,
    updated_at: now,
    deleted_at: null,
  };
  await store.insertToken(q, row);
  return present(row, secret);
}

export async function createToken(ctx: Ctx, body: { name: string; permissions: Permission[] }): Promise<ApiTokenView> {
  return issueToken(ctx.db.k, {
    platformId: ctx.platformId,
    name: body.name,
    permissions: body.permissions,
    now: ctx.now,
  });
}

export async function listTokens(ctx: Ctx, query: store.TokenFilters & { limit?: number; cursor?: string }) {
  const result = await store.listTokens(ctx.db.k, ctx.platformId, query, query);
  return toPage(result, (row) => present(row));
}

export async function getTokenById(ctx: Ctx, tokenId: string): Promise<ApiTokenView> {
  const row = await store.findToken(ctx.db.k, ctx.platformId, tokenId);
  if (row === undefined) throw apiError('TOKEN_NOT_FOUND', `No API token ${tokenId}`);
  return present(row);
}

/** Deletes a token; it stops authenticating with the next request. */
export async function deleteTokenById(ctx: Ctx, tokenId: string): Promise<void> {
  const deleted = await store.markTokenDeleted(ctx.db.k, ctx.platformId, tokenId, iso(ctx.now));
  if (!deleted) throw apiError('TOKEN_NOT_FOUND', `No API token ${tokenId}`);
  ctx.deps.authCache?.clear();
}

/** Makes sure the pinned client id authenticates with the pinned secret. */
export async function pinToken(
  q: Queryable,
  clientId: string,
  clientSecret: string,
  now: Date,
): Promise<store.TokenRow | undefined> {
  const row = await store.findTokenByClientId(q, clientId);
  if (row === undefined) return undefined;
  if (row.deleted_at !== null || hashSecret(clientSecret, row.secret_salt) !== row.secret_hash) {
    const salt = newSalt();
    await store.resetTokenSecret(q, row.id, salt, hashSecret(clientSecret, salt), iso(now));
  }
  return row;
}
