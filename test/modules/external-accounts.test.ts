import { describe, expect, it } from 'vitest';
import { ACCOUNT_TYPES } from '../../src/modules/external-accounts/account-types.js';
import { accountBody } from '../fixtures/accounts.js';
import { build } from '../helper.js';

describe('POST /platform/external-accounts', () => {
  it.each(ACCOUNT_TYPES.map((def) => def.accountType))('registers a valid %s account', async (accountType) => {
    const t = await build();
    const body = accountBody(accountType);
    const created = await t.api('POST', '/platform/external-accounts', { body: { ...body, platformAccountId: `ops-${accountType}` } });
    expect(created.status).toBe(201);
    expect(created.body.id).toMatch(/^ExternalAccount:[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(created.body).toMatchObject({ status: 'ACTIVE', currency: body.currency, platformAccountId: `ops-${accountType}` });
    expect(created.body.customerId).toBeUndefined();
    for (const [key, value] of Object.entries(body.accountInfo)) expect(created.body.accountInfo[key]).toEqual(value);

    const fetched = await t.api('GET', `/platform/external-accounts/${created.body.id}`);
    expect(fetched.status).toBe(200);
    expect(fetched.body).toEqual(created.body);
  });
});
