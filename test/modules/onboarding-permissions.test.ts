// Who may do what across the onboarding areas: every token reads, changes need MANAGE.

import { describe, expect, it } from 'vitest';
import {
  businessBody,
  createCustomer,
  individualBody,
  JPEG,
  multipart,
  documentFields,
  ownerBody,
} from '../fixtures/customers.js';
import { build } from '../helper.js';

describe('permissions of the onboarding operations', () => {
  it('lets a VIEW token read everything and refuses every change with 401 naming MANAGE', async () => {
    const t = await build();
    const token = await t.api('POST', '/tokens', { body: { name: 'reader', permissions: ['VIEW', 'TRANSACT'] } });
    const auth = { username: token.body.clientId, password: token.body.clientSecret };
    const person = await createCustomer(t, individualBody('Jordan Rivera 001'));
    const business = await createCustomer(t, businessBody('R-1'));

    const reads = [
      '/customers',
      `/customers/${person.id}`,
      '/customers/end-user-terms',
      '/verifications',
      `/beneficial-owners?customerId=${business.id}`,
      '/documents',
      '/customers/external-accounts',
      '/discoveries',
      '/vasps',
    ];
    for (const path of reads) expect((await t.api('GET', path, { auth })).status, path).toBe(200);

    const writes: [string, string, Record<string, unknown>][] = [
      ['POST', '/customers', { body: individualBody('Sam Lee') }],
      ['PATCH', `/customers/${person.id}`, { body: { customerType: 'INDIVIDUAL', email: 'x@example.com' } }],
      ['DELETE', `/customers/${person.id}`, {}],
      ['POST', `/customers/${person.id}/kyc-link`, { body: {} }],
      ['POST', `/customers/${person.id}/verify-email`, {}],
      ['POST', `/customers/${person.id}/verify-email/confirm`, { body: { code: '123456' } }],
      ['POST', '/verifications', { body: { customerId: person.id } }],
      ['POST', '/beneficial-owners', { body: ownerBody(business.id, 'Chen') }],
      ['POST', '/documents', multipart(documentFields(person.id), [{ fileName: 'p.jpg', data: JPEG() }])],
      ['POST', '/customers/bulk/csv', multipart({}, [{ fileName: 'c.csv', data: Buffer.from('umaAddress\n') }])],
    ];
    for (const [method, path, options] of writes) {
      const reply = await t.api(method, path, { auth, ...options });
      expect(reply.status, `${method} ${path}`).toBe(401);
      expect(reply.body.details.requiredPermission).toBe('MANAGE');
    }
    // Nothing changed.
    expect((await t.api('GET', '/customers')).body.totalCount).toBe(2);
    expect((await t.api('GET', '/verifications')).body.totalCount).toBe(0);
    expect((await t.api('GET', '/documents')).body.totalCount).toBe(0);
  });

  it('answers 401 without credentials', async () => {
    const t = await build();
    for (const path of ['/customers', '/verifications', '/documents', '/vasps']) {
      const reply = await t.api('GET', path, { auth: null });
      expect(reply.status).toBe(401);
      expect(reply.body.code).toBe('UNAUTHORIZED');
    }
  });
});

describe('request bodies of the customer operations', () => {
  it('answers a missing or non-object body with 400', async () => {
    const t = await build();
    const person = await createCustomer(t, individualBody('Jordan Rivera'));
    for (const [method, path] of [
      ['POST', '/customers'],
      ['PATCH', `/customers/${person.id}`],
    ] as const) {
      const empty = await t.api(method, path, { payload: '', headers: { 'content-type': 'application/json' } });
      expect(empty.status).toBe(400);
      expect(empty.body.code).toBe('INVALID_INPUT');
      const list = await t.api(method, path, { body: [1, 2] });
      expect(list.status).toBe(400);
    }
  });

  it('documents the multipart bodies in railyard’s own OpenAPI document', async () => {
    const t = await build();
    const doc = (await t.api('GET', '/openapi.json', { auth: null })).body;
    expect(doc.paths['/documents'].post.requestBody.content['multipart/form-data'].schema).toEqual({
      $ref: '#/components/schemas/DocumentUploadRequest',
    });
    expect(doc.paths['/documents/{documentId}'].put.requestBody.content['multipart/form-data'].schema).toEqual({
      $ref: '#/components/schemas/DocumentReplaceRequest',
    });
    expect(
      doc.paths['/customers/bulk/csv'].post.requestBody.content['multipart/form-data'].schema.properties.file,
    ).toEqual({ type: 'string', format: 'binary' });
    expect(doc.components.schemas.BusinessCustomer.properties.beneficialOwners.items).toEqual({
      $ref: '#/components/schemas/BeneficialOwner',
    });
    expect(Object.keys(doc.paths['/customers/{customerId}'].delete.responses).sort()).toEqual([
      '200',
      '401',
      '404',
      '410',
      '500',
    ]);
  });
});
