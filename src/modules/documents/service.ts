import { createHash } from 'node:crypto';
import type { TSchema } from '@sinclair/typebox';
import { iso } from '../../clock.js';
import type { Queryable, Tx } from '../../db/index.js';
import { toPage, type PageRequest } from '../../db/pagination.js';
import type { Ctx } from '../../http/context.js';
import { apiError, invalidInput, type FieldError } from '../../http/errors.js';
import type { MultipartForm, UploadedFile } from '../../http/multipart.js';
import { createValidators, markStrict, toFieldErrors } from '../../http/validation.js';
import { newId } from '../../ids.js';
import { findOwner } from '../beneficial-owners/service.js';
import { activeCustomer } from '../customers/lookup.js';
import { DocumentReplaceFields, DocumentUploadFields, type DocumentTypeValue } from './schemas.js';
import * as store from './store.js';

export type DocumentMeta = store.DocumentMeta;

/** The largest file a document may carry. */
export const DOCUMENT_BYTES_MAX = 10 * 1024 * 1024;

/** Identity documents; in strict mode they also need their number and issuing authority. */
export const IDENTITY_DOCUMENT_TYPES: readonly DocumentTypeValue[] = ['PASSPORT', 'DRIVERS_LICENSE', 'NATIONAL_ID'];

// ----------------------------------------------------------------------------- presenting

export function presentDocument(row: DocumentMeta) {
  return {
    id: row.id,
    documentHolder: row.holder_id,
    documentType: row.document_type as DocumentTypeValue,
    ...(row.side !== null ? { side: row.side as 'FRONT' | 'BACK' } : {}),
    country: row.country,
    ...(row.document_number !== null ? { documentNumber: row.document_number } : {}),
    ...(row.issuing_authority !== null ? { issuingAuthority: row.issuing_authority } : {}),
    fileName: row.file_name,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

// ----------------------------------------------------------------------------- checking an upload

/** What a file is, from its first bytes; the name and the declared type do not count. */
export function sniffContentType(data: Buffer): 'image/jpeg' | 'image/png' | 'application/pdf' | undefined {
  if (data.length >= 3 && data[0] === 0xff && data[1] === 0xd8 && data[2] === 0xff) return 'image/jpeg';
  if (data.length >= 8 && data.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])))
    return 'image/png';
  if (data.length >= 5 && data.subarray(0, 5).toString('latin1') === '%PDF-') return 'application/pdf';
  return undefined;
}

interface CheckedUpload {
  fields: Record<string, string>;
  file: UploadedFile;
  contentType: string;
}

function fieldErrors(schema: TSchema, fields: Record<string, string>, strict: boolean): FieldError[] {
  const validators = createValidators();
  const validate = validators.compile(schema, 'body');
  const checked = { ...fields };
  if (strict) markStrict(checked);
  return validate(checked) ? [] : toFieldErrors(validate.errors ?? [], validators.body);
}

/** Every problem of an upload form at once: its fields, then its file. */
function checkForm(ctx: Ctx, form: MultipartForm | null, schema: TSchema): CheckedUpload {
  if (form === null) throw invalidInput([{ field: 'Content-Type', message: 'must be multipart/form-data' }]);
  const strict = ctx.settings.strictIdentifiers === true;
  const errors: FieldError[] = [...form.problems, ...fieldErrors(schema, form.fields, strict)];
  const type = form.fields.documentType as DocumentTypeValue | undefined;
  // The reference leaves both optional for every type: asking for them is a strict rule.
  if (strict && type !== undefined && IDENTITY_DOCUMENT_TYPES.includes(type)) {
    for (const field of ['documentNumber', 'issuingAuthority']) {
      if (form.fields[field] === undefined)
        errors.push({ field, message: `is required for a ${type} (strict identifiers)` });
    }
  }
  const files = form.files.filter((f) => f.fieldName === 'file');
  const file = files[0];
  let contentType: string | undefined;
  if (file === undefined) {
    errors.push({ field: 'file', message: 'is required: send the document as a file part named file' });
  } else if (files.length > 1) {
    errors.push({ field: 'file', message: 'must be sent once' });
  } else if (file.truncated) {
    errors.push({ field: 'file', message: `is larger than ${DOCUMENT_BYTES_MAX / (1024 * 1024)} MB` });
  } else if (file.data.length === 0) {
    errors.push({ field: 'file', message: 'is empty' });
  } else {
    contentType = sniffContentType(file.data);
    if (contentType === undefined)
      errors.push({
        field: 'file',
        message: 'must be a JPEG, PNG or PDF file (recognised by its content, not its name)',
      });
  }
  if (errors.length > 0) throw invalidInput(errors);
  return { fields: form.fields, file: file!, contentType: contentType! };
}

function fileColumns(upload: CheckedUpload) {
  const { fields, file } = upload;
  return {
    document_type: fields.documentType!,
    side: fields.side ?? null,
    country: fields.country!,
    document_number: fields.documentNumber ?? null,
    issuing_authority: fields.issuingAuthority ?? null,
    file_name: file.fileName !== '' ? file.fileName : 'document',
    content_type: upload.contentType,
    size_bytes: file.data.length,
    sha256: createHash('sha256').update(file.data).digest('hex'),
    content: file.data,
  };
}

/** The customer a document holder belongs to: the customer itself, or the owner's business. */
async function holderCustomerId(q: Queryable, platformId: string, holderId: string): Promise<string> {
  if (holderId.startsWith('Customer:')) return (await activeCustomer(q, platformId, holderId)).id;
  const owner = await findOwner(q, platformId, holderId);
  if (owner === undefined) throw apiError('REFERENCE_NOT_FOUND', `No beneficial owner ${holderId}`);
  return (await activeCustomer(q, platformId, owner.customer_id)).id;
}

// ----------------------------------------------------------------------------- operations

export async function uploadDocument(ctx: Ctx, form: MultipartForm | null) {
  const upload = checkForm(ctx, form, DocumentUploadFields);
  const holderId = upload.fields.documentHolder!;
  return ctx.db.transaction(async (tx) => {
    const customerId = await holderCustomerId(tx, ctx.platformId, holderId);
    const now = iso(ctx.now);
    const row: store.DocumentRow = {
      id: newId('Document'),
      platform_id: ctx.platformId,
      holder_id: holderId,
      customer_id: customerId,
      ...fileColumns(upload),
      quality_issue: null,
      submitted_at: null,
      created_at: now,
      updated_at: now,
    };
    await store.insertDocument(tx, row);
    return presentDocument(row);
  });
}

function notFound(id: string) {
  return apiError('REFERENCE_NOT_FOUND', `No document ${id}`);
}

async function loadDocument(q: Queryable, ctx: Ctx, id: string): Promise<DocumentMeta> {
  const row = await store.findDocument(q, ctx.platformId, id);
  if (row === undefined) throw notFound(id);
  return row;
}

/** A new file and details for a document; a quality problem found on the old file is gone with it. */
export async function replaceDocument(ctx: Ctx, id: string, form: MultipartForm | null) {
  await loadDocument(ctx.db.k, ctx, id);
  const upload = checkForm(ctx, form, DocumentReplaceFields);
  return ctx.db.transaction(async (tx) => {
    const row = await loadDocument(tx, ctx, id);
    const changes = { ...fileColumns(upload), quality_issue: null, updated_at: iso(ctx.now) };
    await store.updateDocument(tx, row.id, changes);
    const { content: _content, ...meta } = changes;
    return presentDocument({ ...row, ...meta });
  });
}

export async function getDocument(ctx: Ctx, id: string) {
  return presentDocument(await loadDocument(ctx.db.k, ctx, id));
}

export async function listDocuments(ctx: Ctx, query: { documentHolder?: string | undefined } & PageRequest) {
  return toPage(await store.listDocuments(ctx.db.k, ctx.platformId, query.documentHolder, query), presentDocument);
}

/** Deletes a document, unless a submission for verification already included it. */
export async function deleteDocument(ctx: Ctx, id: string): Promise<void> {
  await ctx.db.transaction(async (tx) => {
    const row = await loadDocument(tx, ctx, id);
    if (row.submitted_at !== null) {
      throw apiError(
        'CONFLICT',
        `Document ${id} was submitted for verification at ${row.submitted_at} and can no longer be deleted`,
      );
    }
    await store.deleteDocument(tx, row.id);
  });
}

/** The stored file of a document (railyard's own download endpoint). */
export async function documentFile(ctx: Ctx, id: string) {
  const file = await store.findDocumentFile(ctx.db.k, ctx.platformId, id);
  if (file === undefined) throw notFound(id);
  return { fileName: file.file_name, contentType: file.content_type, data: Buffer.from(file.content) };
}

// ----------------------------------------------------------------------------- for verifications

export async function documentsOfHolders(
  q: Queryable,
  platformId: string,
  holderIds: readonly string[],
): Promise<DocumentMeta[]> {
  return store.documentsOfHolders(q, platformId, holderIds);
}

export const POOR_QUALITY = 'POOR_QUALITY_DOCUMENT';

/** Records that a verification found these files unusable; replacing a document clears it. */
export async function flagPoorQuality(tx: Tx, ids: readonly string[]): Promise<void> {
  await store.flagDocuments(tx, ids, POOR_QUALITY);
}

/** A submission went to review or a decision: its documents can no longer be deleted. */
export async function markSubmitted(tx: Tx, platformId: string, customerId: string, now: Date): Promise<void> {
  await store.markSubmitted(tx, platformId, customerId, iso(now));
}
