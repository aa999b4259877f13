import { describe, expect, it } from 'vitest';
import { build } from '../helper.js';
import { customerWallet, otpLogin } from '../fixtures/wallet.js';

describe('email OTP login', () => {
  it('logs in with the code sealed by @turnkey/crypto and the retry stamped by the TEK', async () => {
    const t = await build();
    const wallet = await customerWallet(t);
    expect(wallet.credentials).toHaveLength(1);
    expect(wallet.credentials[0]).toMatchObject({
      type: 'EMAIL_OTP',
      nickname: 'avery.quinn@example.com',
      accountId: wallet.accountId,
    });
    const { session, key } = await otpLogin(t, wallet.credentials[0].id);
    expect(session).toMatchObject({
      accountId: wallet.accountId,
      type: 'EMAIL_OTP',
      nickname: 'avery.quinn@example.com',
    });
    expect(session.id).toMatch(/^Session:/);
    expect(session.encryptedSessionSigningKey).toBeUndefined();
    const sessions = await t.api('GET', `/auth/sessions?accountId=${wallet.accountId}`);
    expect(sessions.body.data.map((s: any) => s.id)).toEqual([session.id]);
    expect(key.publicKey).toMatch(/^0[23]/);
  });
});
