// UMA invitations: create, read, claim (once, from any platform), cancel, expire.

import { describe, expect, it } from 'vitest';
import { createCustomer, individualBody } from '../fixtures/customers.js';
import { eventsOf } from '../fixtures/money.js';
import { build } from '../helper.js';

describe('UMA invitations', () => {
  it('creates an invitation with its page, and another platform’s customer claims it once', async () => {
    const t = await build();
    const inviter = await createCustomer(t, individualBody('Rosa Diaz'));
    const created = await t.api('POST', '/invitations', {
      body: { inviterUma: inviter.umaAddress, firstName: 'Rosa', amountToSend: 2_500 },
    });
    expect(created.status, created.text).toBe(201);
    expect(created.body).toMatchObject({
      code: expect.stringMatching(/^[A-Z2-9]{10}$/),
      inviterUma: inviter.umaAddress,
      status: 'PENDING',
      firstName: 'Rosa',
      amountToSend: { amount: 2_500, currency: { code: 'USD' } },
    });
    const { code } = created.body;
    expect(new URL(created.body.url).pathname).toBe(`/_railyard/invitations/${code}`);
    const page = await t.raw('GET', `/_railyard/invitations/${code}`, { auth: null });
    expect(page.status).toBe(200);
    expect(page.text).toContain(inviter.umaAddress);
    expect(page.text).toContain('PENDING');

    const other = await t.newPlatform();
    expect((await other.api('GET', `/invitations/${code}`)).body).toEqual(created.body);
    const bad = await other.api('POST', `/invitations/${code}/claim`, { body: { inviteeUma: 'not an address' } });
    expect(bad.status).toBe(400);
    expect(bad.body.code).toBe('INVALID_UMA_ADDRESS');
    const self = await t.api('POST', `/invitations/${code}/claim`, { body: { inviteeUma: inviter.umaAddress } });
    expect(self.status).toBe(400);

    // Five concurrent claims: exactly one wins.
    const claims = await Promise.all(
      [1, 2, 3, 4, 5].map((i) =>
        other.api('POST', `/invitations/${code}/claim`, { body: { inviteeUma: `$friend${i}@other.example` } }),
      ),
    );
    expect(claims.map((c) => c.status).sort()).toEqual([200, 400, 400, 400, 400]);
    const winner = claims.find((c) => c.status === 200)!;
    expect(winner.body).toMatchObject({
      status: 'CLAIMED',
      inviteeUma: expect.stringMatching(/^\$friend\d@other\.example$/),
    });
    expect(claims.filter((c) => c.status === 400).every((c) => c.body.code === 'INVITATION_ALREADY_CLAIMED')).toBe(
      true,
    );
    // The inviting platform hears of it.
    const events = await eventsOf(t, code);
    expect(events.map((e) => e.type)).toEqual(['INVITATION.CLAIMED']);
    expect(events[0]!.data).toEqual(winner.body);
    expect((await t.api('POST', `/invitations/${code}/cancel`)).body.code).toBe('INVITATION_ALREADY_CLAIMED');
  });

  it('cancels only while pending and only by its platform; expires on the sandbox clock', async () => {
    const t = await build();
    const inviter = await createCustomer(t, individualBody('Sam Okafor'));
    const make = async (expiresInMs?: number) =>
      (
        await t.api('POST', '/invitations', {
          body: {
            inviterUma: inviter.umaAddress,
            ...(expiresInMs !== undefined ? { expiresAt: new Date(Date.now() + expiresInMs).toISOString() } : {}),
          },
        })
      ).body;
    const first = await make();
    const other = await t.newPlatform();
    const foreign = await other.api('POST', `/invitations/${first.code}/cancel`);
    expect(foreign.status).toBe(403);
    const cancelled = await t.api('POST', `/invitations/${first.code}/cancel`);
    expect(cancelled.status).toBe(200);
    expect(cancelled.body.status).toBe('CANCELLED');
    expect((await t.api('POST', `/invitations/${first.code}/cancel`)).body.code).toBe('INVITATION_CANCELLED');
    const late = await other.api('POST', `/invitations/${first.code}/claim`, {
      body: { inviteeUma: '$amy@other.example' },
    });
    expect(late.body.code).toBe('INVITATION_CANCELLED');

    const short = await make(60_000);
    expect(short.status).toBe('PENDING');
    await t.advanceClock(61);
    expect((await t.api('GET', `/invitations/${short.code}`)).body.status).toBe('EXPIRED');
    expect(
      (await t.api('POST', `/invitations/${short.code}/claim`, { body: { inviteeUma: '$amy@other.example' } })).status,
    ).toBe(400);
    expect((await t.api('POST', `/invitations/${short.code}/cancel`)).status).toBe(400);

    const unknown = await t.api('GET', '/invitations/NOPE234567');
    expect([unknown.status, unknown.body.code]).toEqual([404, 'INVITATION_NOT_FOUND']);
    const unknownInviter = await t.api('POST', '/invitations', {
      body: { inviterUma: '$nobody@railyard.sandbox.uma.money', expiresAt: '2020-01-01T00:00:00Z' },
    });
    expect(unknownInviter.status).toBe(400);
    expect(unknownInviter.body.details.errors.map((e: any) => e.field)).toEqual(['inviterUma', 'expiresAt']);
  });

  it('answers INVITATIONS_NOT_CONFIGURED while the platform has invitations switched off', async () => {
    const t = await build();
    const inviter = await createCustomer(t, individualBody('Tomas Berg'));
    expect((await t.raw('GET', '/_railyard/platform')).body.invitations).toBe(true);
    const off = await t.raw('PATCH', '/_railyard/platform', { body: { invitations: false } });
    expect([off.status, off.body.invitations]).toEqual([200, false]);
    const refused = await t.api('POST', '/invitations', { body: { inviterUma: inviter.umaAddress } });
    expect([refused.status, refused.body.code]).toEqual([400, 'INVITATIONS_NOT_CONFIGURED']);
    expect((await t.api('GET', '/invitations/NOPE234567')).status).toBe(404);

    await t.raw('PATCH', '/_railyard/platform', { body: { invitations: true } });
    const created = await t.api('POST', '/invitations', { body: { inviterUma: inviter.umaAddress } });
    expect([created.status, created.body.status]).toEqual([201, 'PENDING']);
  });
});
