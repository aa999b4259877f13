// The list of secret fields (src/http/redaction.ts): every kind of secret is replaced at any
// depth on the side where it is one, and left alone on the other; and the money-moving
// operations the report names (src/modules/requests/service.ts) are the reference's.

import { describe, expect, it } from 'vitest';
import { REDACTED, redactJsonText, SECRET_FIELDS, type SecretKind } from '../../src/http/redaction.js';
import { MONEY_MOVING_OPERATIONS } from '../../src/modules/requests/service.js';
import { referenceSpec } from '../reference.js';

/** A realistic value of each kind, as an app would send or receive it. */
const SAMPLES: Record<SecretKind, unknown> = {
  'client secret': 'sk_sandbox_4f9a1c2b7d3e5f60a1b2',
  'shared secret': 'JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP',
  'one-time code': '123456',
  'private key':
    '-----BEGIN PRIVATE KEY-----\nMIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQg\n-----END PRIVATE KEY-----',
  card: '4111111111111111',
  'access token': 'agt_live_9f8e7d6c5b4a39281706',
  password: 'correct horse battery staple',
  'identity number': '123-45-6789',
};

const KINDS = Object.keys(SAMPLES) as SecretKind[];

describe('the secret fields', () => {
  it('cover every kind of secret', () => {
    expect(new Set(SECRET_FIELDS.map((f) => f.kind))).toEqual(new Set(KINDS));
  });

  describe.each(KINDS)('a %s', (kind) => {
    const fields = SECRET_FIELDS.filter((f) => f.kind === kind);

    it.each(fields.map((f) => [f.field, f.in] as const))(
      '%s is replaced on its side (%s) at any depth, and kept on the other',
      (field, side) => {
        const secret = SAMPLES[kind];
        const body = {
          name: 'Household budget',
          [field]: secret,
          nested: { items: [{ label: 'first', [field]: secret }] },
        };
        const text = JSON.stringify(body);
        for (const which of ['request', 'response'] as const) {
          const redacted = redactJsonText(text, which);
          if (side === which || side === 'both') {
            expect(JSON.parse(redacted)).toEqual({
              name: 'Household budget',
              [field]: REDACTED,
              nested: { items: [{ label: 'first', [field]: REDACTED }] },
            });
            expect(redacted).not.toContain(typeof secret === 'string' ? secret.slice(0, 8) : 'BEGIN');
          } else {
            expect(redacted).toBe(text);
          }
        }
      },
    );
  });

  it('keeps null values, text that is not JSON, and bodies that name no secret as they are', () => {
    expect(redactJsonText('{"clientSecret":null,"a":1}', 'response')).toBe('{"clientSecret":null,"a":1}');
    expect(redactJsonText('not json "clientSecret": x', 'response')).toBe('not json "clientSecret": x');
    const plain = '{"amount":100,"currency":"USD","description":"the secret of good coffee"}';
    expect(redactJsonText(plain, 'request')).toBe(plain);
  });

  it("keeps an error's code in an answer: only a request's code is a one-time code", () => {
    const error = '{"status":400,"code":"INVALID_INPUT","message":"bad"}';
    expect(redactJsonText(error, 'response')).toBe(error);
    expect(JSON.parse(redactJsonText('{"code":"123456"}', 'request'))).toEqual({ code: REDACTED });
  });
});

describe('the money-moving operations of the report', () => {
  it('are operations of the reference that take an Idempotency-Key', () => {
    const spec = referenceSpec();
    const takesKey = new Set<string>();
    for (const item of Object.values<any>(spec.paths))
      for (const operation of Object.values<any>(item)) {
        const parameters = (operation.parameters ?? []).map((p: any) =>
          p.$ref ? spec.components.parameters[p.$ref.split('/').pop()] : p,
        );
        if (parameters.some((p: any) => p.in === 'header' && p.name === 'Idempotency-Key'))
          takesKey.add(operation.operationId);
      }
    for (const operationId of MONEY_MOVING_OPERATIONS.keys()) expect(takesKey, operationId).toContain(operationId);
  });
});
