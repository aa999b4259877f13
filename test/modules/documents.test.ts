import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  addOwner,
  businessBody,
  createCustomer,
  documentFields,
  individualBody,
  JPEG,
  multipart,
  PDF,
  PNG,
  uploadDocument,
} from '../fixtures/customers.js';
import { build, databaseUrl } from '../helper.js';

const fieldsOf = (reply: { body: { details?: { errors?: { field: string }[] } } }) =>
  (reply.body.details?.errors ?? []).map((e) => e.field).sort();

describe('POST /documents', () => {
  it.each([
    ['JPEG', JPEG(), 'passport.jpg', 'image/jpeg'],
    ['PNG', PNG(), 'passport.png', 'image/png'],
    ['PDF', PDF(), 'passport.pdf', 'application/pdf'],
    ['PDF named like text', PDF(), 'notes.txt', 'application/pdf'],
  ])('accepts a %s file, recognised by its content', async (_name, data, fileName, contentType) => {
    const t = await build();
    const customer = await createCustomer(t, individualBody('Jordan Rivera 001'));
    const reply = await t.api(
      'POST',
      '/documents',
      multipart(documentFields(customer.id, 'PASSPORT', { side: 'FRONT' }), [
        { fileName, data, contentType: 'text/plain' },
      ]),
    );
    expect(reply.status).toBe(201);
    expect(reply.body).toEqual({
      id: expect.stringMatching(/^Document:/),
      documentHolder: customer.id,
      documentType: 'PASSPORT',
      side: 'FRONT',
      country: 'US',
      documentNumber: 'X1234567',
      issuingAuthority: 'U.S. Department of State',
      fileName,
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
    });
    const file = await t.raw('GET', `/_railyard/documents/${reply.body.id}/file`);
    expect(file.status).toBe(200);
    expect(file.headers['content-type']).toBe(contentType);
    expect(Buffer.from(file.text, 'latin1').length).toBeGreaterThan(0);
    const stored = await t.deps.db.k
      .selectFrom('documents')
      .select(['content', 'size_bytes', 'content_type'])
      .where('id', '=', reply.body.id)
      .executeTakeFirstOrThrow();
    expect(Buffer.from(stored.content).equals(data)).toBe(true);
    expect(Number(stored.size_bytes)).toBe(data.length);
  });

  it.each([
    ['a text file named .pdf', Buffer.from('just some text, not a PDF'), 'scan.pdf'],
    ['a GIF', Buffer.from('GIF89a\x01\x00\x01\x00', 'latin1'), 'scan.gif'],
    ['an empty file', Buffer.alloc(0), 'scan.jpg'],
  ])('refuses %s with 400 naming file', async (_name, data, fileName) => {
    const t = await build();
    const customer = await createCustomer(t, individualBody('Jordan Rivera 001'));
    const reply = await t.api('POST', '/documents', multipart(documentFields(customer.id), [{ fileName, data }]));
    expect(reply.status).toBe(400);
    expect(reply.body).toMatchObject({ code: 'INVALID_INPUT', details: { errors: [{ field: 'file' }] } });
    expect((await t.api('GET', '/documents')).body.totalCount).toBe(0);
  });

  it('refuses U+0000 in a text field or a file name with 400 naming the field, on either store', async () => {
    const t = await build();
    const customer = await createCustomer(t, individualBody('Jordan Rivera 002'));
    const inField = await t.api(
      'POST',
      '/documents',
      multipart({ ...documentFields(customer.id), documentNumber: 'AB\u00001234' }, [
        { fileName: 'id.png', data: PNG() },
      ]),
    );
    expect(inField.status).toBe(400);
    expect(inField.body.details.errors).toEqual([
      expect.objectContaining({ field: 'documentNumber', message: expect.stringContaining('U+0000') }),
    ]);
    const inName = await t.api(
      'POST',
      '/documents',
      multipart(documentFields(customer.id), [{ fileName: 'id\u0000.png', data: PNG() }]),
    );
    expect(inName.status).toBe(400);
    expect(inName.body.details.errors.map((e: { field: string }) => e.field)).toContain('file');
    expect((await t.api('GET', '/documents')).body.totalCount).toBe(0);
  });

  it('accepts a file of exactly 10 MB and refuses one byte more', async () => {
    const t = await build();
    const customer = await createCustomer(t, individualBody('Jordan Rivera 001'));
    const limit = 10 * 1024 * 1024;
    const exact = Buffer.concat([Buffer.from('%PDF-1.7\n'), Buffer.alloc(limit - 9, 0x20)]);
    expect(exact.length).toBe(limit);
    expect(
      (
        await t.api(
          'POST',
          '/documents',
          multipart(documentFields(customer.id), [{ fileName: 'big.pdf', data: exact }]),
        )
      ).status,
    ).toBe(201);
    const over = Buffer.concat([exact, Buffer.from(' ')]);
    const reply = await t.api(
      'POST',
      '/documents',
      multipart(documentFields(customer.id), [{ fileName: 'big.pdf', data: over }]),
    );
    expect(reply.status).toBe(400);
    expect(reply.body.details.errors).toEqual([{ field: 'file', message: 'is larger than 10 MB' }]);
  });

  it('names every invalid field of the form in one 400', async () => {
    const t = await build();
    const reply = await t.api(
      'POST',
      '/documents',
      multipart({ documentHolder: 'Account:123', documentType: 'DIPLOMA', country: 'usa', side: 'TOP' }),
    );
    expect(reply.status).toBe(400);
    expect(fieldsOf(reply)).toEqual(['country', 'documentHolder', 'documentType', 'file', 'side']);
    // The reference leaves an identity document's number and issuing authority optional:
    // only strict mode asks for them (and for them not empty).
    const customer = await createCustomer(t, individualBody('Jordan Rivera'));
    const identityForm = (holder: string, extra: Record<string, string> = {}) =>
      multipart({ documentHolder: holder, documentType: 'NATIONAL_ID', country: 'US', ...extra }, [
        { fileName: 'id.png', data: PNG() },
      ]);
    expect((await t.api('POST', '/documents', identityForm(customer.id))).status).toBe(201);
    expect((await t.api('POST', '/documents', identityForm(customer.id, { documentNumber: '' }))).status).toBe(201);
    const strict = await t.newPlatform({ strictIdentifiers: true });
    const strictCustomer = await createCustomer(strict, individualBody('Jordan Rivera'));
    const identity = await strict.api('POST', '/documents', identityForm(strictCustomer.id));
    expect(fieldsOf(identity)).toEqual(['documentNumber', 'issuingAuthority']);
    const empty = await strict.api(
      'POST',
      '/documents',
      identityForm(strictCustomer.id, { documentNumber: '', issuingAuthority: 'Service Canada' }),
    );
    expect(empty.body.details.errors).toEqual([
      { field: 'documentNumber', constraint: { minLength: 1 }, message: 'must not be empty (strict identifiers)' },
    ]);
  });

  it('answers a JSON body with 400 naming the content type', async () => {
    const t = await build();
    const reply = await t.api('POST', '/documents', {
      body: { documentHolder: 'Customer:x', documentType: 'PASSPORT', country: 'US' },
    });
    expect(reply.status).toBe(400);
    expect(reply.body.details.errors).toEqual([{ field: 'Content-Type', message: 'must be multipart/form-data' }]);
  });

  it('answers 404 for a holder that does not exist, belongs to another platform or was deleted', async () => {
    const t = await build();
    const other = await t.newPlatform();
    const customer = await createCustomer(t, individualBody('Jordan Rivera 001'));
    const unknownCustomer = await uploadDocument(t, 'Customer:missing');
    expect(unknownCustomer.body).toMatchObject({ status: 404, code: 'USER_NOT_FOUND' });
    expect((await uploadDocument(t, 'BeneficialOwner:missing')).body).toMatchObject({
      status: 404,
      code: 'REFERENCE_NOT_FOUND',
    });
    expect((await uploadDocument(other, customer.id)).status).toBe(404);
    await t.api('DELETE', `/customers/${customer.id}`);
    expect((await uploadDocument(t, customer.id)).status).toBe(404);
  });

  it('stores documents of beneficial owners', async () => {
    const t = await build();
    const business = await createCustomer(t, businessBody('R-1'));
    const owner = await addOwner(t, business.id, 'Chen');
    const reply = await uploadDocument(t, owner.id, 'DRIVERS_LICENSE');
    expect(reply.status).toBe(201);
    expect(reply.body.documentHolder).toBe(owner.id);
  });
});

describe('GET, PUT and DELETE /documents/{documentId}, GET /documents', () => {
  it('lists by holder, replaces the file and details, and deletes', async () => {
    const t = await build();
    const other = await t.newPlatform();
    const a = await createCustomer(t, individualBody('Jordan Rivera 001'));
    const b = await createCustomer(t, individualBody('Sam Lee 001'));
    const first = (await uploadDocument(t, a.id)).body;
    const second = (await uploadDocument(t, a.id, 'UTILITY_BILL', { fileName: 'bill.pdf', data: PDF() })).body;
    const third = (await uploadDocument(t, b.id)).body;
    const ids = async (query: string) =>
      (await t.api('GET', `/documents${query}`)).body.data.map((d: { id: string }) => d.id);
    expect(await ids('')).toEqual([third.id, second.id, first.id]);
    expect(await ids(`?documentHolder=${a.id}`)).toEqual([second.id, first.id]);
    expect(await ids('?limit=1')).toEqual([third.id]);
    expect((await other.api('GET', '/documents')).body.data).toEqual([]);
    expect((await t.api('GET', `/documents/${first.id}`)).body).toEqual(first);

    const png = PNG();
    const replaced = await t.api(
      'PUT',
      `/documents/${first.id}`,
      multipart(
        {
          documentType: 'NATIONAL_ID',
          side: 'BACK',
          country: 'CA',
          documentNumber: 'N-77',
          issuingAuthority: 'Service Canada',
        },
        [{ fileName: 'id-back.png', data: png }],
      ),
    );
    expect(replaced.status).toBe(200);
    expect(replaced.body).toEqual({
      ...first,
      documentType: 'NATIONAL_ID',
      side: 'BACK',
      country: 'CA',
      documentNumber: 'N-77',
      issuingAuthority: 'Service Canada',
      fileName: 'id-back.png',
      updatedAt: expect.any(String),
    });
    const file = await t.deps.db.k
      .selectFrom('documents')
      .select('content')
      .where('id', '=', first.id)
      .executeTakeFirstOrThrow();
    expect(Buffer.from(file.content).equals(png)).toBe(true);
    const badReplace = await t.api(
      'PUT',
      `/documents/${first.id}`,
      multipart({ documentType: 'PASSPORT', country: 'US' }, [{ fileName: 'x', data: Buffer.from('hello') }]),
    );
    expect(badReplace.status).toBe(400);
    expect(fieldsOf(badReplace)).toEqual(['file']);

    expect((await t.api('DELETE', `/documents/${second.id}`)).status).toBe(204);
    expect((await t.api('GET', `/documents/${second.id}`)).body).toMatchObject({
      status: 404,
      code: 'REFERENCE_NOT_FOUND',
    });
    for (const [method, options] of [
      ['GET', {}],
      ['DELETE', {}],
      ['PUT', multipart(documentFields(a.id), [{ fileName: 'a.jpg', data: JPEG() }])],
    ] as const) {
      const reply = await other.api(method, `/documents/${first.id}`, options);
      expect(reply.status, method).toBe(404);
    }
  });

  it('refuses with 409 to delete a document a submission for verification included', async () => {
    const t = await build();
    const customer = await createCustomer(t, individualBody('Jordan Rivera 001'));
    const document = (await uploadDocument(t, customer.id)).body;
    expect((await t.api('POST', '/verifications', { body: { customerId: customer.id } })).body.verificationStatus).toBe(
      'PENDING_MANUAL_REVIEW',
    );
    const reply = await t.api('DELETE', `/documents/${document.id}`);
    expect(reply.status).toBe(409);
    expect(reply.body.code).toBe('CONFLICT');
    expect((await t.api('GET', `/documents/${document.id}`)).status).toBe(200);
  });

  it.skipIf(databaseUrl !== undefined)('keeps the files in the store across a restart', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'railyard-docs-'));
    try {
      const first = await build({ config: { dataDir: dir } });
      const customer = await createCustomer(first, individualBody('Jordan Rivera 001'));
      const data = PDF();
      const document = (await uploadDocument(first, customer.id, 'PASSPORT', { fileName: 'p.pdf', data })).body;
      await first.close();
      const second = await build({ config: { dataDir: dir } });
      const stored = await second.deps.db.k
        .selectFrom('documents')
        .select(['content', 'sha256'])
        .where('id', '=', document.id)
        .executeTakeFirstOrThrow();
      expect(Buffer.from(stored.content).equals(data)).toBe(true);
      await second.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
