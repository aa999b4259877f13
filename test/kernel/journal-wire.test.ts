// A journal entry crosses to the journal's thread as an array (journal-rows.js toWire) and is
// made an entry again there (fromWire): every field must survive the trip, as postMessage
// copies it (structuredClone), whatever its value.

import { describe, expect, it } from 'vitest';
import type { CapturedRequest } from '../../src/http/journal.js';
import { fromWire, toWire } from '../../src/modules/requests/journal-rows.js';

function entry(overrides: Partial<CapturedRequest> = {}): CapturedRequest {
  return {
    id: 'Request:01a25060-0000-7000-8000-000000000001',
    platformId: 'Platform:01a25060-0000-7000-8000-000000000002',
    receivedAtMs: 1_765_100_000_123.25,
    sandboxAt: new Date('2026-12-07T12:00:00.123Z'),
    method: 'POST',
    url: '/grid/2025-10-13/transfer-out?x=1',
    operationId: 'createTransferOut',
    status: 409,
    durationMs: 1.875,
    requestId: 'req-42',
    idempotencyKey: 'key-7',
    tokenId: 'Token:01a25060-0000-7000-8000-000000000003',
    agentId: 'Agent:01a25060-0000-7000-8000-000000000004',
    bodyText: '{"amount":1}',
    requestContentType: 'application/json',
    bodyChars: 12,
    requestLength: 12,
    payload: '{"status":409,"code":"CONFLICT","message":"m"}',
    responseLength: 46,
    responseContentType: 'application/json; charset=utf-8',
    fault: { ruleId: 'FaultRule:1', effect: 'status', value: 409 },
    answered: true,
    ...overrides,
  };
}

describe('journal entries between threads', () => {
  it('come back with every field, as copied by postMessage', () => {
    const full = entry();
    expect(toWire(full)).toHaveLength(Object.keys(full).length);
    expect(fromWire(structuredClone(toWire(full)))).toEqual(full);
  });

  it('keep absent fields absent and a body in bytes as its bytes', () => {
    const sparse = entry({
      operationId: undefined,
      status: undefined,
      idempotencyKey: undefined,
      tokenId: null,
      agentId: undefined,
      bodyText: undefined,
      bodyChars: -1,
      payload: Buffer.from('{"ok":true}'),
      fault: undefined,
      answered: false,
    });
    const back = fromWire(structuredClone(toWire(sparse)));
    expect({ ...back, payload: undefined }).toEqual({ ...sparse, payload: undefined });
    expect(Buffer.from(back.payload as Uint8Array).toString('utf8')).toBe('{"ok":true}');
  });
});
