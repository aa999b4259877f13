// The reference's own examples for stablecoin issuance: provider links, registrations, mints
// (every funding source not reserved for a later flow) and burns (every source likewise). A
// default platform takes every one, a platform in strict mode refuses exactly the values
// STRICT_REFUSALS lists for this area (none: the example token identifier is a Spark one).

import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { accountBody } from '../fixtures/accounts.js';
import { build, type Reply, type Tenant, type TestApp } from '../helper.js';
import { referenceSpec } from '../reference.js';
import { buildEveryVariant, requestBodyOf, variantsOf } from './builder.js';
import { MAGIC_EXAMPLES, ofArea, RESERVED_VARIANTS, STRICT_REFUSALS, strictRulesRead } from './expectations.js';
import {
  bodyFor,
  builtCases,
  type ExampleCase,
  expectValidByReference,
  findingsOf,
  magicOf,
  onBoth,
} from './support.js';

const isReserved = (c: ExampleCase) =>
  Object.entries(RESERVED_VARIANTS[c.operationId] ?? {}).some(([path, tags]) => tags.includes(c.body[path]?.type));

const LINKS = builtCases('linkStablecoinProviderAccount');
const REGISTRATIONS = builtCases('registerStablecoin');
const MINTS = builtCases('createStablecoinMint').filter((c) => !isReserved(c));
const BURNS = builtCases('createStablecoinBurn').filter((c) => !isReserved(c));
const ALL = [...LINKS, ...REGISTRATIONS, ...MINTS, ...BURNS];

const idem = () => ({ 'idempotency-key': randomUUID() });

interface World {
  tenant: Tenant;
  linkId?: string;
  coinId?: string;
  sparkWallet: string;
  usdBank: string;
}

describe('reference examples: stablecoin provider links, registrations, mints and burns', () => {
  let t: TestApp;
  const worlds = new Map<boolean, World>();

  beforeAll(async () => {
    t = await build();
    for (const strict of [false, true]) {
      const tenant = await t.newPlatform({ strictIdentifiers: strict });
      const external = async (type: string) => {
        const reply = await tenant.api('POST', '/platform/external-accounts', { body: accountBody(type, '000') });
        expect(reply.status, reply.text).toBe(201);
        return reply.body.id as string;
      };
      worlds.set(strict, {
        tenant,
        sparkWallet: await external('SPARK_WALLET'),
        usdBank: await external('USD_ACCOUNT'),
      });
    }
  });

  const both = (c: ExampleCase, send: (w: World) => Promise<Reply>) => onBoth(c, worlds, send);

  it('sends bodies the reference schema takes, from its examples, leaving out reserved variants', () => {
    for (const c of ALL) expectValidByReference(c);
    // StablecoinBurnDestination.rail is a required enum without an example: its first value.
    expect([...new Set(ALL.flatMap((c) => c.filled))].sort()).toEqual(['destination.rail']);
    expect(findingsOf(ALL)).toEqual(ofArea(STRICT_REFUSALS, 'stablecoins', (r) => `${r.field} ${r.value} ${r.rule}`));
    expect(strictRulesRead(ALL)['Spark token identifier (btkn…1 + bech32)']).toBeGreaterThan(0);
    expect(magicOf(ALL)).toEqual(ofArea(MAGIC_EXAMPLES, 'stablecoins', (_e, value) => value));
    // What is left out is what the reference itself calls reserved.
    const schemas = referenceSpec().components.schemas;
    for (const [union, operationId] of [
      ['StablecoinMintFundingSource', 'createStablecoinMint'],
      ['StablecoinBurnSource', 'createStablecoinBurn'],
    ] as const) {
      const path = union === 'StablecoinMintFundingSource' ? 'fundingSource' : 'source';
      const reserved = variantsOf(union)
        .filter((v) => /reserved for/i.test(JSON.stringify(schemas[v.schema])))
        .map((v) => v.tag);
      expect(reserved, union).toEqual(RESERVED_VARIANTS[operationId]![path]);
    }
    expect(MINTS.length + 2).toBe(buildEveryVariant(requestBodyOf('createStablecoinMint').schema).length);
  });

  it.each(LINKS.map((c) => [c.name, c] as const))('%s', async (_name, c) => {
    const replies = await both(c, (w) =>
      w.tenant.api('POST', '/stablecoin-provider-accounts', { body: bodyFor(c, {}), headers: idem() }),
    );
    for (const [i, reply] of replies.entries()) {
      expect(reply.body.status, c.name).toBe('ACTIVE');
      worlds.get(i === 1)!.linkId = reply.body.id;
    }
  });

  it.each(REGISTRATIONS.map((c) => [c.name, c] as const))('%s', async (_name, c) => {
    const replies = await both(c, (w) =>
      w.tenant.api('POST', '/stablecoins', {
        body: bodyFor(c, { stablecoinProviderAccountId: w.linkId! }),
        headers: idem(),
      }),
    );
    for (const [i, reply] of replies.entries()) worlds.get(i === 1)!.coinId = reply.body.id;
    // The sandbox reviews and provisions a registration in its own time (sandbox clock).
    for (const w of worlds.values()) await w.tenant.raw('POST', '/_railyard/clock/advance', { body: { seconds: 120 } });
    for (const w of worlds.values()) {
      const coin = await w.tenant.api('GET', `/stablecoins/${w.coinId}`);
      expect(coin.body.issuanceStatus, c.name).toBe('PROVISIONED');
    }
  });

  it.each(MINTS.map((c) => [c.name, c] as const))('%s', async (_name, c) => {
    await both(c, (w) => {
      const ids: Record<string, string> = { 'destination.accountId': w.sparkWallet };
      if (c.body.fundingSource.externalAccountId !== undefined) ids['fundingSource.externalAccountId'] = w.usdBank;
      return w.tenant.api('POST', `/stablecoins/${w.coinId}/mints`, { body: bodyFor(c, ids), headers: idem() });
    });
  });

  it.each(BURNS.map((c) => [c.name, c] as const))('%s', async (_name, c) => {
    // A burn takes supply: the debit-funded mints complete first (sandbox clock).
    for (const w of worlds.values()) await w.tenant.raw('POST', '/_railyard/clock/advance', { body: { seconds: 60 } });
    await both(c, (w) =>
      w.tenant.api('POST', `/stablecoins/${w.coinId}/burns`, {
        body: bodyFor(c, { 'destination.externalAccountId': w.usdBank }),
        headers: idem(),
      }),
    );
  });
});
