// GET /uma-providers: the sandbox's fixed provider directory, its filters and pages, and the
// lenient reading of a query the operation cannot refuse (it declares no 400).

import { describe, expect, it } from 'vitest';
import { build } from '../helper.js';

describe('GET /uma-providers', () => {
  it('lists every provider by name, descending by default, with the allow-list status', async () => {
    const t = await build();
    const reply = await t.api('GET', '/uma-providers');
    expect(reply.status).toBe(200);
    expect(reply.body.hasMore).toBe(false);
    expect(reply.body.totalCount).toBe(8);
    expect(reply.body.data.map((p: any) => p.name)).toEqual([
      'Solent Payments',
      'Rio Grande Pagos',
      'Railyard Sandbox UMA',
      'Maple Money',
      'Lagos Transfer',
      'Ganges Pay',
      'Baltic Wallet',
      'Andes Remesas',
    ]);
    expect(reply.body.data.find((p: any) => p.domain === 'sandbox.uma.money')).toEqual({
      name: 'Railyard Sandbox UMA',
      supportedRegions: ['US', 'DE', 'MX'],
      domain: 'sandbox.uma.money',
      logoUrl: 'https://railyard.example/logo.png',
      supportedCurrencies: [
        { code: 'USD', name: 'US Dollar', symbol: '$', decimals: 2 },
        { code: 'EUR', name: 'Euro', symbol: '€', decimals: 2 },
        { code: 'MXN', name: 'Mexican Peso', symbol: 'MX$', decimals: 2 },
      ],
      lei: '5493000RAILYARD00006',
      allowListStatus: true,
    });
    expect(reply.body.data.filter((p: any) => !p.allowListStatus).map((p: any) => p.name)).toEqual(['Solent Payments']);
  });

  it('filters by country, currency and allow list', async () => {
    const t = await build();
    const names = async (query: string) =>
      (await t.api('GET', `/uma-providers?${query}`)).body.data.map((p: any) => p.name);
    expect(await names('countryCode=MX&sortOrder=asc')).toEqual(['Railyard Sandbox UMA', 'Rio Grande Pagos']);
    expect(await names('currencyCode=eur&sortOrder=asc')).toEqual([
      'Baltic Wallet',
      'Railyard Sandbox UMA',
      'Solent Payments',
    ]);
    expect(await names('currencyCode=EUR&hasBlockedProviders=false&sortOrder=asc')).toEqual([
      'Baltic Wallet',
      'Railyard Sandbox UMA',
    ]);
    expect(await names('countryCode=US&currencyCode=CAD')).toEqual(['Maple Money']);
    expect(await names('countryCode=JP')).toEqual([]);
  });

  it('pages with limit and cursor, each provider once', async () => {
    const t = await build();
    const seen: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const reply = await t.api('GET', `/uma-providers?limit=3&sortOrder=asc${cursor ? `&cursor=${cursor}` : ''}`);
      expect(reply.status).toBe(200);
      expect(reply.body.totalCount).toBe(8);
      seen.push(...reply.body.data.map((p: any) => p.name));
      cursor = reply.body.hasMore ? reply.body.nextCursor : undefined;
      if (!reply.body.hasMore) expect(reply.body.nextCursor).toBeUndefined();
      pages += 1;
    } while (cursor !== undefined);
    expect(pages).toBe(3);
    expect(seen).toEqual([...seen].sort());
    expect(new Set(seen).size).toBe(8);
  });

  it('reads a query it cannot refuse leniently instead of answering 400', async () => {
    const t = await build();
    const odd = await t.api(
      'GET',
      '/uma-providers?limit=abc&sortOrder=sideways&cursor=not-ours&hasBlockedProviders=maybe',
    );
    expect(odd.status).toBe(200);
    expect(odd.body.data).toHaveLength(8);
    expect(odd.body.data[0].name).toBe('Solent Payments');
    const clamped = await t.api('GET', '/uma-providers?limit=0');
    expect(clamped.body.data).toHaveLength(1);
    expect((await t.api('GET', '/uma-providers?limit=500')).body.data).toHaveLength(8);
  });

  it('needs credentials', async () => {
    const t = await build();
    expect((await t.api('GET', '/uma-providers', { auth: null })).status).toBe(401);
  });
});
