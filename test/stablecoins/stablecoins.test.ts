// Registering stablecoins: link selection and its errors, the sandbox timeline and its
// outcomes, duplicates, replays, listing and reading.

import { describe, expect, it } from 'vitest';
import { build } from '../helper.js';
import { idem, link, register, sparkToken } from './support.js';

describe('POST /stablecoins (registerStablecoin)', () => {
  it('registers on the only ACTIVE link and walks review, provisioning and enabling on the sandbox clock', async () => {
    const t = await build();
    const only = await link(t);
    await link(t, 'client-002'); // INVALID links do not count
    const token = sparkToken();
    const reply = await register(t, { providerTokenIdentifier: 'rail', networkTokenIdentifier: token });
    expect(reply.status, reply.text).toBe(201);
    expect(reply.body).toEqual({
      id: expect.stringMatching(/^Stablecoin:/),
      name: 'RAIL stablecoin',
      symbol: 'RAIL',
      baseCurrency: 'USD',
      network: 'SPARK',
      decimals: 6,
      issuanceStatus: 'PENDING_REVIEW',
      gridOperationsStatus: 'NOT_ENABLED',
      networkTokenIdentifier: token,
      provider: 'BRALE',
      stablecoinProviderAccountId: only.id,
      providerEnvironment: 'SANDBOX',
      providerTokenIdentifier: 'rail',
      createdAt: expect.any(String),
      updatedAt: reply.body.createdAt,
    });
    const read = async () => (await t.api('GET', `/stablecoins/${reply.body.id}`)).body;
    const timeline: [number, string, string, string | undefined][] = [
      [29, 'PENDING_REVIEW', 'NOT_ENABLED', undefined],
      [1, 'PROVISIONING', 'NOT_ENABLED', undefined],
      [30, 'PROVISIONED', 'PENDING_APPROVAL', undefined],
      [30, 'PROVISIONED', 'ENABLING', undefined],
      [30, 'PROVISIONED', 'ENABLED', 'RAIL'],
      [3600, 'PROVISIONED', 'ENABLED', 'RAIL'],
    ];
    for (const [seconds, issuance, grid, currency] of timeline) {
      await t.advanceClock(seconds);
      const coin = await read();
      expect([coin.issuanceStatus, coin.gridOperationsStatus, coin.currency]).toEqual([issuance, grid, currency]);
    }
  });

  it('stops at REJECTED (002) or FAILED (003) by the suffix of providerTokenIdentifier, even across one long jump', async () => {
    const t = await build();
    await link(t);
    const rejected = (await register(t, { providerTokenIdentifier: 'REJ002', networkTokenIdentifier: sparkToken() }))
      .body;
    const failed = (await register(t, { providerTokenIdentifier: 'FAIL003', networkTokenIdentifier: sparkToken() }))
      .body;
    await t.advanceClock(30);
    expect((await t.api('GET', `/stablecoins/${rejected.id}`)).body.issuanceStatus).toBe('REJECTED');
    expect((await t.api('GET', `/stablecoins/${failed.id}`)).body.issuanceStatus).toBe('PROVISIONING');
    await t.advanceClock(600);
    expect((await t.api('GET', `/stablecoins/${rejected.id}`)).body).toMatchObject({
      issuanceStatus: 'REJECTED',
      gridOperationsStatus: 'NOT_ENABLED',
    });
    expect((await t.api('GET', `/stablecoins/${failed.id}`)).body).toMatchObject({
      issuanceStatus: 'FAILED',
      gridOperationsStatus: 'NOT_ENABLED',
    });
  });

  it('answers the selection error with several ACTIVE links, and 404 with none', async () => {
    const t = await build();
    const none = await register(t, { providerTokenIdentifier: 'NONE', networkTokenIdentifier: sparkToken() });
    expect(none.status).toBe(404);
    expect(none.body.code).toBe('STABLECOIN_PROVIDER_ACCOUNT_NOT_FOUND');
    const a = await link(t);
    await link(t);
    const ambiguous = await register(t, { providerTokenIdentifier: 'AMB', networkTokenIdentifier: sparkToken() });
    expect(ambiguous.status).toBe(400);
    expect(ambiguous.body.code).toBe('STABLECOIN_PROVIDER_ACCOUNT_SELECTION_REQUIRED');
    expect(ambiguous.body.details.errors[0].field).toBe('stablecoinProviderAccountId');
    const chosen = await register(t, {
      providerTokenIdentifier: 'AMB',
      networkTokenIdentifier: sparkToken(),
      stablecoinProviderAccountId: a.id,
    });
    expect(chosen.status).toBe(201);
    expect(chosen.body.stablecoinProviderAccountId).toBe(a.id);
  });

  it('refuses an unknown, INVALID or REVOKED link with its own code', async () => {
    const t = await build();
    const other = await t.newPlatform();
    const foreign = await link(other);
    const invalid = await link(t, 'client-002');
    const revoked = await link(t, 'client-003');
    await t.advanceClock(60);
    const cases: [string, number, string][] = [
      ['StablecoinProviderAccount:00000000-0000-7000-8000-000000000000', 404, 'STABLECOIN_PROVIDER_ACCOUNT_NOT_FOUND'],
      [foreign.id, 404, 'STABLECOIN_PROVIDER_ACCOUNT_NOT_FOUND'],
      [invalid.id, 400, 'STABLECOIN_PROVIDER_ACCOUNT_INVALID'],
      [revoked.id, 400, 'STABLECOIN_PROVIDER_ACCOUNT_REVOKED'],
    ];
    for (const [id, status, code] of cases) {
      const reply = await register(t, {
        providerTokenIdentifier: 'X',
        networkTokenIdentifier: sparkToken(),
        stablecoinProviderAccountId: id,
      });
      expect([reply.status, reply.body.code], id).toEqual([status, code]);
    }
    expect((await t.api('GET', '/stablecoins')).body.totalCount).toBe(0);
  });

  it('refuses a token registered already (409), replays its key, and checks the token identifier (strict mode)', async () => {
    const t = await build({ strictIdentifiers: true });
    const l = await link(t);
    const token = sparkToken();
    const headers = idem();
    const body = { providerTokenIdentifier: 'DUP', networkTokenIdentifier: token, stablecoinProviderAccountId: l.id };
    const first = await register(t, body, headers);
    expect(first.status).toBe(201);
    const replay = await register(t, body, headers);
    expect(replay.status).toBe(201);
    expect(replay.text).toBe(first.text);
    const sameNetworkToken = await register(t, { ...body, providerTokenIdentifier: 'OTHER' });
    expect([sameNetworkToken.status, sameNetworkToken.body.code]).toEqual([409, 'CONFLICT']);
    const sameProviderToken = await register(t, { ...body, networkTokenIdentifier: sparkToken() });
    expect([sameProviderToken.status, sameProviderToken.body.code]).toEqual([409, 'CONFLICT']);
    const keyReused = await register(t, { ...body, providerTokenIdentifier: 'NEW' }, headers);
    expect([keyReused.status, keyReused.body.code]).toEqual([409, 'CONFLICT']);
    const notSpark = await register(t, { ...body, networkTokenIdentifier: '0xdeadbeef' });
    expect([notSpark.status, notSpark.body.code]).toEqual([400, 'INVALID_INPUT']);
    expect(notSpark.body.details.errors[0].field).toBe('networkTokenIdentifier');
    const wrongNetwork = await t.api('POST', '/stablecoins', {
      body: { providerTokenIdentifier: 'N', networkTokenIdentifier: sparkToken(), network: 'SOLANA' },
    });
    expect([wrongNetwork.status, wrongNetwork.body.code]).toEqual([400, 'INVALID_INPUT']);
    expect(wrongNetwork.body.details.errors.map((e: any) => e.field).sort()).toEqual(['idempotency-key', 'network']);
    expect((await t.api('GET', '/stablecoins')).body.totalCount).toBe(1);
  });
});

describe('POST /stablecoins (registerStablecoin): one 400, retries, and the only link', () => {
  it("names the schema's findings, the token identifier (strict mode) and the link in one 400, writing nothing", async () => {
    const t = await build({ strictIdentifiers: true });
    const invalid = await link(t, 'bad-002');
    const fields = (reply: any) => reply.body.details.errors.map((e: any) => e.field).sort();
    const schemaAndToken = await register(t, {
      providerTokenIdentifier: 'X'.repeat(65),
      networkTokenIdentifier: '0xabc',
    });
    expect([schemaAndToken.status, schemaAndToken.body.code]).toEqual([400, 'INVALID_INPUT']);
    expect(fields(schemaAndToken)).toEqual(['networkTokenIdentifier', 'providerTokenIdentifier']);
    const unknownLink = await register(t, {
      providerTokenIdentifier: 'X',
      networkTokenIdentifier: '0xabc',
      stablecoinProviderAccountId: 'StablecoinProviderAccount:00000000-0000-7000-8000-000000000000',
    });
    expect([unknownLink.status, unknownLink.body.code]).toEqual([400, 'INVALID_INPUT']);
    expect(fields(unknownLink)).toEqual(['networkTokenIdentifier', 'stablecoinProviderAccountId']);
    const invalidLink = await register(
      t,
      { providerTokenIdentifier: 'X', networkTokenIdentifier: '0xabc', stablecoinProviderAccountId: invalid.id },
      {} as never,
    );
    expect([invalidLink.status, invalidLink.body.code]).toEqual([400, 'INVALID_INPUT']);
    expect(fields(invalidLink)).toEqual(['idempotency-key', 'networkTokenIdentifier', 'stablecoinProviderAccountId']);
    const wrongTypes = await register(t, { providerTokenIdentifier: 7, networkTokenIdentifier: null, network: [] });
    expect([wrongTypes.status, wrongTypes.body.code]).toEqual([400, 'INVALID_INPUT']);
    expect((await t.api('GET', '/stablecoins')).body.totalCount).toBe(0);
  });

  it('registers a token again after its registration was REJECTED or FAILED, but not while one lives', async () => {
    const t = await build();
    const l = await link(t);
    for (const [providerTokenIdentifier, status] of [
      ['RJ002', 'REJECTED'],
      ['FL003', 'FAILED'],
    ]) {
      const body = { providerTokenIdentifier, networkTokenIdentifier: sparkToken(), stablecoinProviderAccountId: l.id };
      const first = await register(t, body);
      expect(first.status, first.text).toBe(201);
      await t.advanceClock(120);
      expect((await t.api('GET', `/stablecoins/${first.body.id}`)).body.issuanceStatus).toBe(status);
      const again = await register(t, body);
      expect(again.status, again.text).toBe(201);
      expect(again.body).toMatchObject({
        issuanceStatus: 'PENDING_REVIEW',
        networkTokenIdentifier: body.networkTokenIdentifier,
      });
      expect(again.body.id).not.toBe(first.body.id);
      // The new registration is live: a third one is a conflict.
      const third = await register(t, body);
      expect([third.status, third.body.code]).toEqual([409, 'CONFLICT']);
      expect(third.body.details.stablecoinId).toBe(again.body.id);
    }
  });

  it("answers the only link's own code when it is INVALID or REVOKED and none is named", async () => {
    const cases: [string, number, string][] = [
      ['only-002', 0, 'STABLECOIN_PROVIDER_ACCOUNT_INVALID'],
      ['only-003', 60, 'STABLECOIN_PROVIDER_ACCOUNT_REVOKED'],
    ];
    for (const [apiClientId, wait, code] of cases) {
      const t = await build();
      const only = await link(t, apiClientId);
      if (wait > 0) await t.advanceClock(wait);
      const named = await register(t, {
        providerTokenIdentifier: 'X',
        networkTokenIdentifier: sparkToken(),
        stablecoinProviderAccountId: only.id,
      });
      expect([named.status, named.body.code]).toEqual([400, code]);
      const implicit = await register(t, { providerTokenIdentifier: 'X', networkTokenIdentifier: sparkToken() });
      expect([implicit.status, implicit.body.code]).toEqual([400, code]);
      // With a second unusable link there is no only one: 404 as with none.
      await link(t, `${apiClientId}-other-002`);
      const several = await register(t, { providerTokenIdentifier: 'X', networkTokenIdentifier: sparkToken() });
      expect([several.status, several.body.code]).toEqual([404, 'STABLECOIN_PROVIDER_ACCOUNT_NOT_FOUND']);
    }
  });
});

describe('GET /stablecoins (listStablecoins) and GET /stablecoins/{stablecoinId} (getStablecoin)', () => {
  it('filters by issuanceStatus, gridOperationsStatus and provider, pages, and hides other platforms', async () => {
    const t = await build();
    await link(t);
    const first = (await register(t, { providerTokenIdentifier: 'ONE', networkTokenIdentifier: sparkToken() })).body;
    await t.advanceClock(120);
    const second = (await register(t, { providerTokenIdentifier: 'TWO', networkTokenIdentifier: sparkToken() })).body;
    const third = (await register(t, { providerTokenIdentifier: 'T002', networkTokenIdentifier: sparkToken() })).body;
    const ids = async (query: string) => (await t.api('GET', `/stablecoins${query}`)).body.data.map((c: any) => c.id);
    expect(await ids('')).toEqual([third.id, second.id, first.id]);
    expect(await ids('?issuanceStatus=PROVISIONED&gridOperationsStatus=ENABLED&provider=BRALE')).toEqual([first.id]);
    expect(await ids('?issuanceStatus=PENDING_REVIEW')).toEqual([third.id, second.id]);
    const page = await t.api('GET', '/stablecoins?limit=1');
    expect(page.body).toMatchObject({ hasMore: true, totalCount: 3 });
    expect(await ids(`?limit=2&cursor=${page.body.nextCursor}`)).toEqual([second.id, first.id]);
    const bad = await t.api('GET', '/stablecoins?gridOperationsStatus=ON&limit=0');
    expect([bad.status, bad.body.code]).toEqual([400, 'INVALID_INPUT']);
    expect(bad.body.details.errors.map((e: any) => e.field).sort()).toEqual(['gridOperationsStatus', 'limit']);

    const other = await t.newPlatform();
    expect((await other.api('GET', '/stablecoins')).body.data).toEqual([]);
    const foreign = await other.api('GET', `/stablecoins/${first.id}`);
    expect([foreign.status, foreign.body.code]).toEqual([404, 'REFERENCE_NOT_FOUND']);
  });
});
