import { describe, expect, it } from 'vitest';
import {
  addOwner,
  businessBody,
  createCustomer,
  eventsOf,
  individualBody,
  uploadDocument,
} from '../fixtures/customers.js';
import { build, type Tenant } from '../helper.js';

const link = (
  t: Tenant,
  customerId: string,
  body: unknown = { redirectUri: 'https://app.example.com/onboarded' },
  key?: string,
) =>
  t.api('POST', `/customers/${customerId}/kyc-link`, { body, ...(key ? { headers: { 'idempotency-key': key } } : {}) });

/** The page path and token of a kycUrl. */
function pageOf(kycUrl: string) {
  const url = new URL(kycUrl);
  return { path: url.pathname, token: url.searchParams.get('token')!, query: url.search };
}

describe('POST /customers/{customerId}/kyc-link', () => {
  it('returns a single-use link to railyard’s hosted page without changing the customer', async () => {
    const t = await build();
    const customer = await createCustomer(t, individualBody('Jordan Rivera 003'));
    const reply = await link(t, customer.id);
    expect(reply.status).toBe(201);
    expect(reply.body).toEqual({
      kycUrl: expect.stringMatching(
        /^http:\/\/localhost(:\d+)?\/_railyard\/kyc\/KycLink%3A[0-9a-f-]{36}\?token=[A-Za-z0-9_-]{32}$/,
      ),
      expiresAt: expect.any(String),
      provider: 'SUMSUB',
      token: expect.any(String),
    });
    expect(
      Date.parse(reply.body.expiresAt) - Date.parse((await t.raw('GET', '/_railyard/clock')).body.now),
    ).toBeGreaterThan(23 * 3600 * 1000);
    expect(pageOf(reply.body.kycUrl).token).toBe(reply.body.token);
    expect((await t.api('GET', `/customers/${customer.id}`)).body.kycStatus).toBe('UNVERIFIED');
    // Without an Idempotency-Key every call makes a fresh link.
    expect((await link(t, customer.id)).body.kycUrl).not.toBe(reply.body.kycUrl);
    // No body at all is an empty request.
    expect((await t.api('POST', `/customers/${customer.id}/kyc-link`)).status).toBe(201);
  });

  it('replays the stored response for the same Idempotency-Key and body, and refuses another body with 409', async () => {
    const t = await build();
    const customer = await createCustomer(t, individualBody('Jordan Rivera 003'));
    const first = await link(t, customer.id, { redirectUri: 'https://app.example.com/a' }, 'key-1');
    const again = await link(t, customer.id, { redirectUri: 'https://app.example.com/a' }, 'key-1');
    expect(again.status).toBe(201);
    expect(again.text).toBe(first.text);
    const different = await link(t, customer.id, { redirectUri: 'https://app.example.com/b' }, 'key-1');
    expect(different.status).toBe(409);
    expect(different.body.code).toBe('CONFLICT');
    const rows = await t.deps.db.k
      .selectFrom('kyc_links')
      .select('id')
      .where('customer_id', '=', customer.id)
      .execute();
    expect(rows).toHaveLength(1);
    // Keys belong to one platform.
    const other = await t.newPlatform();
    const theirs = await createCustomer(other, individualBody('Sam Lee 003'));
    expect((await link(other, theirs.id, { redirectUri: 'https://app.example.com/a' }, 'key-1')).status).toBe(201);
  });

  it('makes one link of two concurrent first uses of a key', async () => {
    const t = await build();
    const customer = await createCustomer(t, individualBody('Jordan Rivera 003'));
    const replies = await Promise.all(
      [1, 2, 3].map(() => link(t, customer.id, { redirectUri: 'https://app.example.com/a' }, 'race')),
    );
    expect(replies.map((r) => r.status)).toEqual([201, 201, 201]);
    expect(new Set(replies.map((r) => r.text)).size).toBe(1);
  });

  it('answers 400 for a redirectUri that is not a URI (strict mode: not http(s)), 404 for unknown, foreign and deleted customers', async () => {
    const t = await build();
    const other = await t.newPlatform();
    const strict = await t.newPlatform({ strictIdentifiers: true });
    const customer = await createCustomer(t, individualBody('Jordan Rivera 003'));
    const reply = await link(t, customer.id, { redirectUri: 'not a uri' });
    expect(reply.status).toBe(400);
    expect(reply.body.details.errors[0].field).toBe('redirectUri');
    // An app's own scheme (a mobile deep link) is a URI as the reference asks.
    const deepLink = await link(t, customer.id, { redirectUri: 'myapp://kyc/done' });
    expect(deepLink.status).toBe(201);
    const strictCustomer = await createCustomer(strict, individualBody('Jordan Rivera 003'));
    for (const redirectUri of ['not a uri', 'ftp://files.example.com/x', 'myapp://kyc/done']) {
      const refused = await link(strict, strictCustomer.id, { redirectUri });
      expect(refused.status).toBe(400);
      expect(refused.body.details.errors[0].field).toBe('redirectUri');
    }
    expect((await link(t, 'Customer:nobody')).body).toMatchObject({ status: 404, code: 'USER_NOT_FOUND' });
    expect((await link(other, customer.id)).status).toBe(404);
    await t.api('DELETE', `/customers/${customer.id}`);
    expect((await link(t, customer.id)).status).toBe(404);
  });
});

describe('the hosted KYC page (/_railyard/kyc)', () => {
  it('lets the tester complete the flow: the customer is approved and sent back to the redirectUri', async () => {
    const t = await build();
    const customer = await createCustomer(t, individualBody('Jordan Rivera 003'));
    const { kycUrl } = (await link(t, customer.id)).body;
    const { path, query } = pageOf(kycUrl);
    const page = await t.raw('GET', `${path}${query}`, { auth: null });
    expect(page.status).toBe(200);
    expect(page.headers['content-type']).toContain('text/html');
    expect(page.text).toContain(customer.id);
    expect(page.text).toContain('UNVERIFIED');

    const done = await t.raw('POST', `${path}/complete${query}`, {
      auth: null,
      payload: '',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    expect(done.status).toBe(303);
    expect(done.headers.location).toBe('https://app.example.com/onboarded');
    const after = (await t.api('GET', `/customers/${customer.id}`)).body;
    expect(after.kycStatus).toBe('APPROVED');
    expect(await eventsOf(t, customer.id)).toEqual([['CUSTOMER.KYC_APPROVED', after]]);
    const verifications = (await t.api('GET', `/verifications?customerId=${customer.id}`)).body.data;
    expect(verifications).toMatchObject([{ verificationStatus: 'APPROVED', errors: [] }]);
    expect((await eventsOf(t, verifications[0].id)).map(([type]) => type)).toEqual(['VERIFICATION.APPROVED']);

    // Single use: the page no longer offers a choice, and a second answer is refused.
    expect((await t.raw('GET', `${path}${query}`, { auth: null })).text).toContain('can no longer be used');
    const twice = await t.raw('POST', `${path}/reject${query}`, { auth: null });
    expect(twice.status).toBe(409);
  });

  it('decides the submission under review, and the business owners by their suffixes, on rejection', async () => {
    const t = await build();
    const business = await createCustomer(t, businessBody('REG-001'));
    for (const type of ['ARTICLES_OF_ASSOCIATION', 'TRUST_AGREEMENT', 'BANK_STATEMENT'])
      await uploadDocument(t, business.id, type);
    const owners = [
      await addOwner(t, business.id, 'Chen 001', { ownershipPercentage: 20 }),
      await addOwner(t, business.id, 'Diaz', { ownershipPercentage: 20 }),
    ];
    const submitted = (await t.api('POST', '/verifications', { body: { customerId: business.id } })).body;
    expect(submitted.verificationStatus).toBe('IN_PROGRESS');
    const { kycUrl } = (await link(t, business.id, {})).body;
    const { path, query } = pageOf(kycUrl);
    expect((await t.raw('GET', `${path}${query}`, { auth: null })).text).toContain('KYB');
    const rejected = await t.raw('POST', `${path}/reject${query}`, { auth: null });
    // Without a redirectUri the answer is the decided customer.
    expect(rejected.status).toBe(200);
    expect(rejected.body).toMatchObject({ id: business.id, kybStatus: 'REJECTED' });
    expect(rejected.body.beneficialOwners.map((o: { id: string; kycStatus: string }) => [o.id, o.kycStatus])).toEqual([
      [owners[0].id, 'PENDING'],
      [owners[1].id, 'APPROVED'],
    ]);
    const verification = (await t.api('GET', `/verifications/${submitted.id}`)).body;
    expect(verification.verificationStatus).toBe('REJECTED');
    expect((await eventsOf(t, submitted.id)).map(([type]) => type)).toEqual([
      'VERIFICATION.IN_PROGRESS',
      'VERIFICATION.REJECTED',
    ]);
    expect((await eventsOf(t, business.id)).map(([type]) => type)).toEqual([
      'CUSTOMER.KYB_PENDING',
      'CUSTOMER.KYB_REJECTED',
    ]);
  });

  it('refuses a wrong token, an expired link and a customer already decided', async () => {
    const t = await build();
    const customer = await createCustomer(t, individualBody('Jordan Rivera 003'));
    const { kycUrl } = (await link(t, customer.id)).body;
    const { path, query } = pageOf(kycUrl);
    expect((await t.raw('GET', `${path}?token=wrong`, { auth: null })).status).toBe(404);
    expect((await t.raw('POST', `${path}/complete?token=wrong`, { auth: null })).status).toBe(404);
    await t.raw('POST', '/_railyard/clock/advance', { body: { seconds: 24 * 3600 } });
    const expired = await t.raw('POST', `${path}/complete${query}`, { auth: null });
    expect(expired.status).toBe(409);
    expect(expired.body.message).toContain('expired');

    const approved = await createCustomer(t, individualBody('Jordan Rivera'));
    const second = pageOf((await link(t, approved.id)).body.kycUrl);
    expect((await t.raw('GET', `${second.path}${second.query}`, { auth: null })).text).toContain(
      'can no longer be used',
    );
    expect((await t.raw('POST', `${second.path}/complete${second.query}`, { auth: null })).status).toBe(409);
  });
});
