// RAILYARD_RECORD: the record of exchanges that CI checks against the reference keeps every
// request's shape but never a value the reference marks write-only.

import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { build } from '../helper.js';
import { idem, linkBody } from '../stablecoins/support.js';

describe('the exchange record', () => {
  it('keeps that a provider secret was sent, never the secret', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'railyard-record-')), 'exchanges.ndjson');
    const t = await build({ config: { recordFile: file } });
    const body = { ...linkBody(), apiClientSecret: 'sk_live_do_not_keep_4242' };
    const reply = await t.api('POST', '/stablecoin-provider-accounts', { body, headers: idem() });
    expect(reply.status, reply.text).toBe(201);
    const text = readFileSync(file, 'utf8');
    expect(text).not.toContain('sk_live_do_not_keep_4242');
    const line = JSON.parse(text.trim().split('\n').at(-1)!);
    expect(line).toMatchObject({ method: 'POST', status: 201 });
    expect(line.requestBody).toEqual({ ...body, apiClientSecret: '(write-only, not recorded)' });
  });
});
