import { describe, expect, it } from 'vitest';
import { ACCOUNT_TYPES } from '../../src/modules/external-accounts/account-types.js';
import { build } from '../helper.js';

describe('GET /discoveries', () => {
  it('lists the institutions of a corridor, in a fixed order', async () => {
    const t = await build();
    const mx = await t.api('GET', '/discoveries?country=MX&currency=MXN');
    expect(mx.status).toBe(200);
    expect(mx.body).toEqual({
      data: [
        { bankName: 'Banco Azteca', displayName: 'Banco Azteca', country: 'MX', currency: 'MXN' },
        { bankName: 'Banorte', displayName: 'Banorte', country: 'MX', currency: 'MXN' },
        { bankName: 'BBVA Mexico', displayName: 'BBVA México', country: 'MX', currency: 'MXN' },
        { bankName: 'Santander Mexico', displayName: 'Santander México', country: 'MX', currency: 'MXN' },
      ],
    });
    expect((await t.api('GET', '/discoveries?country=mx&currency=mxn')).body).toEqual(mx.body);
  });

  it('filters by one parameter, returns everything without any, and nothing for an unknown corridor', async () => {
    const t = await build();
    const eur = (await t.api('GET', '/discoveries?currency=EUR')).body.data;
    expect(new Set(eur.map((d: { country: string }) => d.country))).toEqual(new Set(['DE', 'ES', 'FR', 'NL']));
    const kenya = (await t.api('GET', '/discoveries?country=KE')).body.data;
    expect(kenya.map((d: { bankName: string }) => d.bankName)).toEqual(['Equity Bank', 'KCB Bank', 'M-Pesa']);
    const all = (await t.api('GET', '/discoveries')).body.data;
    expect(all.length).toBeGreaterThan(90);
    // Every currency a bank account type of the account-type table holds has institutions.
    const currencies = new Set(all.map((d: { currency: string }) => d.currency));
    const held = ACCOUNT_TYPES.filter((def) => def.kind === 'BANK' && def.currencies !== 'ANY_FIAT').flatMap((def) => [
      ...(def.currencies as string[]),
    ]);
    expect(held.filter((code) => !currencies.has(code))).toEqual([]);
    expect((await t.api('GET', '/discoveries?country=AQ&currency=USD')).body).toEqual({ data: [] });
  });

  it('answers 400 for a malformed country or currency', async () => {
    const t = await build();
    const reply = await t.api('GET', '/discoveries?country=Mexico&currency=PESO');
    expect(reply.status).toBe(400);
    expect(reply.body.details.errors.map((e: { field: string }) => e.field).sort()).toEqual(['country', 'currency']);
  });
});

describe('GET /vasps', () => {
  it('pages through the VASP directory alphabetically', async () => {
    const t = await build();
    const first = await t.api('GET', '/vasps?limit=5');
    expect(first.status).toBe(200);
    expect(first.body.data).toEqual([
      { vaspName: 'Binance', url: 'https://www.binance.com' },
      { vaspName: 'Bitfinex', url: 'https://www.bitfinex.com' },
      { vaspName: 'Bitpanda', url: 'https://www.bitpanda.com' },
      { vaspName: 'Bitso', url: 'https://bitso.com' },
      { vaspName: 'Bitstamp', url: 'https://www.bitstamp.net' },
    ]);
    expect(first.body.hasMore).toBe(true);
    expect(first.body.totalCount).toBeUndefined();
    const names: string[] = first.body.data.map((v: { vaspName: string }) => v.vaspName);
    let cursor = first.body.nextCursor;
    while (cursor) {
      const page = await t.api('GET', `/vasps?limit=5&cursor=${cursor}`);
      names.push(...page.body.data.map((v: { vaspName: string }) => v.vaspName));
      cursor = page.body.nextCursor;
      if (!page.body.hasMore) expect(cursor).toBeUndefined();
    }
    expect(names).toHaveLength(15);
    expect(names).toContain('Coinbase');
    expect(names.at(-1)).toBe('Upbit');
    expect((await t.api('GET', '/vasps')).body.data).toHaveLength(15);
    expect((await t.api('GET', '/vasps?cursor=nonsense')).status).toBe(400);
    expect((await t.api('GET', '/vasps?limit=500')).status).toBe(400);
  });
});
