// Stablecoin provider account links: linking (secret sealed, never shown), the sandbox
// credential outcomes, duplicates, idempotent replays, listing and reading.

import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { openText } from '../../src/crypto/sealing.js';
import { railyardKey } from '../../src/db/keys.js';
import { providerSecretKeys } from '../../src/modules/stablecoins/service.js';
import { build } from '../helper.js';
import { idem, link, linkBody } from './support.js';

const LINKS = '/stablecoin-provider-accounts';

describe('POST /stablecoin-provider-accounts (linkStablecoinProviderAccount)', () => {
  it('links an ACTIVE BRALE account in SANDBOX, keeps the secret sealed and never shows it', async () => {
    const t = await build();
    const secret = `brale-secret-${randomUUID()}`;
    const reply = await t.api('POST', LINKS, {
      body: { provider: 'BRALE', apiClientId: 'acme-client-1', apiClientSecret: secret, providerAccountId: 'acct_42' },
      headers: idem(),
    });
    expect(reply.status, reply.text).toBe(201);
    expect(reply.body).toEqual({
      id: expect.stringMatching(/^StablecoinProviderAccount:/),
      provider: 'BRALE',
      providerAccountId: 'acct_42',
      providerEnvironment: 'SANDBOX',
      status: 'ACTIVE',
      lastVerifiedAt: reply.body.createdAt,
      createdAt: expect.any(String),
      updatedAt: reply.body.createdAt,
    });
    expect(reply.text).not.toContain(secret);
    const read = await t.api('GET', `${LINKS}/${reply.body.id}`);
    expect(read.body).toEqual(reply.body);
    expect(read.text).not.toContain(secret);
    // At rest: sealed, not the secret, nor anything that contains it.
    const row = await t.deps.db.k
      .selectFrom('stablecoin_provider_accounts')
      .selectAll()
      .where('id', '=', reply.body.id)
      .executeTakeFirstOrThrow();
    expect(row.sealed_client_secret).not.toContain(secret);
    expect(JSON.stringify(row)).not.toContain(secret);
    // Sealed under its own key drawn from the stored one, and opens to the very secret.
    const stored = await railyardKey(t.deps.db.k, 'stablecoin-provider-secrets', new Date());
    expect(openText(providerSecretKeys(stored).seal, row.sealed_client_secret)).toBe(secret);
    expect(() => openText(stored, row.sealed_client_secret)).toThrow();
    const records = await t.deps.db.k.selectFrom('idempotency_keys').selectAll().execute();
    expect(JSON.stringify(records)).not.toContain(secret);
  });

  it('derives the provider account id from the credentials when none is given', async () => {
    const t = await build();
    const one = await link(t, 'client-derived');
    expect(one.providerAccountId).toMatch(/^[0-9A-Za-z]{27}$/);
    // The same credentials expose the same account: linking them again is a duplicate.
    const again = await t.api('POST', LINKS, { body: linkBody('client-derived'), headers: idem() });
    expect(again.status).toBe(409);
    expect(again.body.code).toBe('CONFLICT');
  });

  it('marks credentials ending 002 INVALID, and relinking the account with good ones makes it ACTIVE', async () => {
    const t = await build();
    const bad = await link(t, 'client-002', { providerAccountId: 'acct_bad' });
    expect(bad.status).toBe('INVALID');
    expect(bad.lastVerifiedAt).toBeUndefined();
    await t.advanceClock(5);
    const fixed = await link(t, 'client-good', { providerAccountId: 'acct_bad' });
    expect(fixed).toMatchObject({ id: bad.id, status: 'ACTIVE', lastVerifiedAt: fixed.updatedAt });
    expect(fixed.updatedAt > bad.updatedAt).toBe(true);
  });

  it('revokes a 003 link 60 seconds after linking', async () => {
    const t = await build();
    const revoked = await link(t, 'client-003');
    expect(revoked.status).toBe('ACTIVE');
    await t.advanceClock(59);
    expect((await t.api('GET', `${LINKS}/${revoked.id}`)).body.status).toBe('ACTIVE');
    await t.advanceClock(1);
    expect((await t.api('GET', `${LINKS}/${revoked.id}`)).body.status).toBe('REVOKED');
  });

  it('refuses a second link of an ACTIVE account with 409 CONFLICT, changing nothing', async () => {
    const t = await build();
    const first = await link(t, 'client-a', { providerAccountId: 'acct_same' });
    const second = await t.api('POST', LINKS, {
      body: linkBody('client-b', { providerAccountId: 'acct_same' }),
      headers: idem(),
    });
    expect(second.status).toBe(409);
    expect(second.body).toMatchObject({ code: 'CONFLICT', details: { stablecoinProviderAccountId: first.id } });
    expect((await t.api('GET', LINKS)).body.totalCount).toBe(1);
  });

  it('replays a repeated Idempotency-Key byte for byte, and refuses the key with another payload (409)', async () => {
    const t = await build();
    const headers = idem();
    const body = linkBody('client-replay');
    const first = await t.api('POST', LINKS, { body, headers });
    const replay = await t.api('POST', LINKS, { body, headers });
    expect(replay.status).toBe(201);
    expect(replay.text).toBe(first.text);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    const otherSecret = await t.api('POST', LINKS, { body: { ...body, apiClientSecret: 'another' }, headers });
    expect(otherSecret.status).toBe(409);
    expect(otherSecret.body.code).toBe('CONFLICT');
    expect((await t.api('GET', LINKS)).body.totalCount).toBe(1);
  });

  it('requires the Idempotency-Key and names every invalid field at once', async () => {
    const t = await build();
    const noKey = await t.api('POST', LINKS, { body: linkBody() });
    expect(noKey.status).toBe(400);
    expect(noKey.body.code).toBe('INVALID_INPUT');
    expect(noKey.body.details.errors.map((e: any) => e.field)).toEqual(['idempotency-key']);
    const bad = await t.api('POST', LINKS, { body: { provider: 'CIRCLE', apiClientId: '' } });
    expect([bad.status, bad.body.code]).toEqual([400, 'INVALID_INPUT']);
    expect(bad.body.details.errors.map((e: any) => e.field).sort()).toEqual(
      ['apiClientId', 'apiClientSecret', 'idempotency-key', 'provider'].sort(),
    );
    expect((await t.api('GET', LINKS)).body.totalCount).toBe(0);
  });
});

describe('GET /stablecoin-provider-accounts (listStablecoinProviderAccounts) and GET …/{id}', () => {
  it('lists newest first with provider and status filters and cursor paging; reads only its own', async () => {
    const t = await build();
    const active = await link(t, 'list-1');
    const invalid = await link(t, 'list-002');
    const newest = await link(t, 'list-3');
    const all = await t.api('GET', `${LINKS}?limit=2`);
    expect(all.body.data.map((l: any) => l.id)).toEqual([newest.id, invalid.id]);
    expect(all.body).toMatchObject({ hasMore: true, totalCount: 3 });
    const next = await t.api('GET', `${LINKS}?limit=2&cursor=${all.body.nextCursor}`);
    expect(next.body.data.map((l: any) => l.id)).toEqual([active.id]);
    expect(next.body.hasMore).toBe(false);
    const onlyInvalid = await t.api('GET', `${LINKS}?status=INVALID&provider=BRALE`);
    expect(onlyInvalid.body.data.map((l: any) => l.id)).toEqual([invalid.id]);
    const badFilter = await t.api('GET', `${LINKS}?status=LOST`);
    expect([badFilter.status, badFilter.body.code]).toEqual([400, 'INVALID_INPUT']);
    expect(badFilter.body.details.errors[0].field).toBe('status');

    const other = await t.newPlatform();
    expect((await other.api('GET', LINKS)).body.data).toEqual([]);
    const foreign = await other.api('GET', `${LINKS}/${active.id}`);
    expect(foreign.status).toBe(404);
    expect(foreign.body.code).toBe('STABLECOIN_PROVIDER_ACCOUNT_NOT_FOUND');
  });
});
