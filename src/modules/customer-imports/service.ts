import { iso } from '../../clock.js';
import type { Queryable, Tx } from '../../db/index.js';
import { recordEvent } from '../../events/outbox.js';
import type { Ctx } from '../../http/context.js';
import { apiError, ApiError, FieldErrors, type FieldError } from '../../http/errors.js';
import type { MultipartForm } from '../../http/multipart.js';
import { newId } from '../../ids.js';
import { defineJob } from '../../jobs/queue.js';
import { ownEntry } from '../../json.js';
import { createPreparedCustomer, prepareCustomer } from '../customers/service.js';
import { platformCtx } from '../platform/service.js';
import * as store from './store.js';

// Bulk customer import: an uploaded CSV becomes a job; its rows are created one by one with
// the same rules as POST /customers, each row (customer, event and job progress) in one
// transaction, so a restarted server resumes a job exactly where it stopped.

/** The largest CSV file accepted, and the most rows one file may hold. */
export const CSV_BYTES_MAX = 5 * 1024 * 1024;
export const IMPORT_ROWS_MAX = 10_000;

const REQUIRED_FOR_ALL = ['umaAddress', 'platformCustomerId', 'customerType'] as const;
const REQUIRED_ADDRESS = ['addressLine1', 'city', 'state', 'postalCode', 'country'] as const;
const REQUIRED_FOR: Record<string, readonly string[]> = {
  INDIVIDUAL: ['fullName', 'birthDate', ...REQUIRED_ADDRESS],
  BUSINESS: ['businessLegalName', ...REQUIRED_ADDRESS],
};

/** How the API's field paths read in the CSV's columns, so row errors name columns. */
const COLUMN_OF_FIELD: Record<string, string> = {
  'address.line1': 'addressLine1',
  'address.line2': 'addressLine2',
  'address.city': 'city',
  'address.state': 'state',
  'address.postalCode': 'postalCode',
  'address.country': 'country',
  'businessInfo.legalName': 'businessLegalName',
  'businessInfo.registrationNumber': 'businessRegistrationNumber',
  'businessInfo.taxId': 'businessTaxId',
  'businessInfo.incorporatedOn': 'businessIncorporatedOn',
  'businessInfo.country': 'businessCountry',
};

type ErrorEntry = { code: string; message: string; details: Record<string, unknown>; correlationId: string };

// ----------------------------------------------------------------------------- presenting

export async function presentJob(q: Queryable, row: store.JobRow) {
  return {
    id: row.id,
    status: row.status as 'PENDING' | 'PROCESSING' | 'COMPLETED' | 'FAILED',
    progress: {
      total: Number(row.total),
      processed: Number(row.processed),
      successful: Number(row.successful),
      failed: Number(row.failed),
    },
    errors: (await store.errorsOf(q, row.id)) as ErrorEntry[],
    ...(row.completed_at !== null ? { completedAt: row.completed_at } : {}),
  };
}

// ----------------------------------------------------------------------------- the file

/** RFC 4180 CSV: quoted fields may hold commas, quotes ("") and line breaks. Blank lines are skipped. */
export function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = '';
  let quoted = false;
  const body = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  const endRow = () => {
    row.push(field);
    if (row.length > 1 || row[0] !== '') rows.push(row);
    row = [];
    field = '';
  };
  for (let i = 0; i < body.length; i++) {
    const c = body[i]!;
    if (quoted) {
      if (c === '"' && body[i + 1] === '"') {
        field += '"';
        i++;
      } else if (c === '"') {
        quoted = false;
      } else {
        field += c;
      }
    } else if (c === '"' && field === '') {
      quoted = true;
    } else if (c === ',') {
      row.push(field);
      field = '';
    } else if (c === '\n' || c === '\r') {
      if (c === '\r' && body[i + 1] === '\n') i++;
      endRow();
    } else {
      field += c;
    }
  }
  if (quoted) throw new Error('a quoted field is not closed');
  if (field !== '' || row.length > 0) endRow();
  return rows;
}

interface ParsedFile {
  header: string[];
  rows: string[][];
}

/** The rows of the file, or what makes the whole file unusable. */
function readFile(csv: string): ParsedFile | string {
  let table: string[][];
  try {
    table = parseCsv(csv);
  } catch (err) {
    return `The file is not valid CSV: ${(err as Error).message}`;
  }
  const [header, ...rows] = table;
  if (header === undefined) return 'The file is empty; the first line must name the columns';
  const names = header.map((name) => name.trim());
  const missing = REQUIRED_FOR_ALL.filter((column) => !names.includes(column));
  if (missing.length > 0)
    return `The header lacks the required column${missing.length > 1 ? 's' : ''} ${missing.join(', ')}`;
  if (rows.length > IMPORT_ROWS_MAX) return `The file has ${rows.length} rows; at most ${IMPORT_ROWS_MAX} are accepted`;
  return { header: names, rows };
}

/** One CSV row as a POST /customers body, and the required cells it leaves empty. */
function rowToBody(header: string[], cells: string[]): { body: Record<string, unknown>; missing: FieldError[] } {
  const value: Record<string, string> = {};
  header.forEach((name, i) => {
    const cell = (cells[i] ?? '').trim();
    if (cell !== '') value[name] = cell;
  });
  const type = value.customerType ?? '';
  const missing = [...REQUIRED_FOR_ALL, ...(ownEntry(REQUIRED_FOR, type) ?? [])]
    .filter((column) => value[column] === undefined)
    .map((column) => ({ field: column, message: 'is required in the CSV' }));

  const body: Record<string, unknown> = {};
  const copy = (column: string, field = column) => {
    if (value[column] !== undefined) body[field] = value[column];
  };
  copy('customerType');
  copy('platformCustomerId');
  copy('umaAddress');
  copy('email');
  copy('phoneNumber');
  copy('region');
  if (value.currencies !== undefined)
    body.currencies = value.currencies
      .split(/[;|]/)
      .map((c) => c.trim())
      .filter((c) => c !== '');
  if (REQUIRED_ADDRESS.some((column) => value[column] !== undefined) || value.addressLine2 !== undefined) {
    const address: Record<string, string> = {};
    for (const [column, field] of [
      ['addressLine1', 'line1'],
      ['addressLine2', 'line2'],
      ['city', 'city'],
      ['state', 'state'],
      ['postalCode', 'postalCode'],
      ['country', 'country'],
    ] as const) {
      if (value[column] !== undefined) address[field] = value[column];
    }
    body.address = address;
  }
  if (type === 'BUSINESS') {
    const info: Record<string, string> = {};
    for (const [column, field] of [
      ['businessLegalName', 'legalName'],
      ['businessRegistrationNumber', 'registrationNumber'],
      ['businessTaxId', 'taxId'],
      ['businessIncorporatedOn', 'incorporatedOn'],
    ] as const) {
      if (value[column] !== undefined) info[field] = value[column];
    }
    const country = value.businessCountry ?? value.country;
    if (country !== undefined) info.country = country;
    body.businessInfo = info;
  } else {
    copy('fullName');
    copy('birthDate');
    copy('nationality');
  }
  return { body, missing };
}

function asColumns(errors: FieldError[]): FieldError[] {
  return errors.map((e) => ({ ...e, field: COLUMN_OF_FIELD[e.field] ?? e.field }));
}

// ----------------------------------------------------------------------------- operations

/**
 * The durable job that processes an upload. It runs outside a transaction (each row commits
 * with its progress), so a job interrupted by a crash or a lost lease resumes at the first
 * row not yet counted; the progress guard in countRow keeps two runs from processing a row twice.
 */
const importJob = defineJob<{ jobId: string }>('customers.bulk-import', {
  mode: 'external',
  leaseMs: 10 * 60_000,
  async run(job, jobContext) {
    await processJob(await platformCtx(jobContext), job.payload.jobId);
  },
});

/** Accepts a CSV upload as a job; the rows are processed by the job runner right after the answer. */
export async function uploadCustomersCsv(ctx: Ctx, form: MultipartForm | null) {
  // The upload itself must hold a usable file; what the file says is the job's to judge.
  const errors = new FieldErrors();
  const file = form?.files.find((f) => f.fieldName === 'file');
  if (form === null) errors.add('file', 'is required: send multipart/form-data with the CSV in a file part named file');
  else if (form.problems.length > 0) for (const p of form.problems) errors.add(p.field, p.message);
  else if (file === undefined) errors.add('file', 'is required: the form has no file part named file');
  else if (file.truncated) errors.add('file', `is larger than ${CSV_BYTES_MAX / (1024 * 1024)} MB`);
  errors.throwIfAny();
  if (file === undefined) throw new Error('unreachable: a form without its file was refused above');

  let csv: string | null = null;
  let problem: string | undefined;
  if (file.data.includes(0)) problem = 'The file holds a NUL byte (U+0000), which CSV text does not';
  else csv = file.data.toString('utf8');

  const now = iso(ctx.now);
  const job: store.JobRow = {
    id: newId('BulkCustomerImportJob'),
    platform_id: ctx.platformId,
    status: 'PENDING',
    csv,
    total: 0,
    processed: 0,
    successful: 0,
    failed: 0,
    created_at: now,
    updated_at: now,
    completed_at: null,
  };
  await ctx.db.transaction(async (tx) => {
    await store.insertJob(tx, job);
    // A file that cannot be read fails the job when it runs; the reason is kept from now.
    if (problem !== undefined) await store.insertError(tx, job.id, fileError(problem));
    await importJob.schedule(tx, {
      platformId: ctx.platformId,
      payload: { jobId: job.id },
      dueAt: ctx.now,
      now: ctx.now,
    });
  });
  return { jobId: job.id, status: 'PENDING' as const };
}

function fileError(message: string): ErrorEntry {
  return { code: 'INVALID_INPUT', message, details: {}, correlationId: 'file' };
}

/** The job as it stands: PENDING until the runner takes it, PROCESSING with its progress, then COMPLETED or FAILED. */
export async function getBulkCustomerImportJob(ctx: Ctx, jobId: string) {
  const job = await store.findJob(ctx.db.k, ctx.platformId, jobId);
  if (job === undefined) throw apiError('BULK_UPLOAD_JOB_NOT_FOUND', `No bulk import job ${jobId}`);
  return presentJob(ctx.db.k, job);
}

async function finish(
  tx: Tx,
  ctx: Ctx,
  job: store.JobRow,
  status: 'COMPLETED' | 'FAILED',
  total?: number,
): Promise<void> {
  const now = iso(ctx.now);
  await store.updateJob(tx, job.id, {
    status,
    csv: null,
    updated_at: now,
    completed_at: now,
    ...(total !== undefined ? { total } : {}),
  });
  const finished = (await store.findJob(tx, job.platform_id, job.id))!;
  await recordEvent(tx, {
    platformId: job.platform_id,
    type: `BULK_UPLOAD.${status}`,
    resourceId: job.id,
    data: await presentJob(tx, finished),
    now: ctx.now,
  });
}

async function processJob(ctx: Ctx, jobId: string): Promise<void> {
  const job = await store.findJob(ctx.db.k, ctx.platformId, jobId);
  if (job === undefined || job.status === 'COMPLETED' || job.status === 'FAILED') return;
  if (job.csv === null) {
    await ctx.db.transaction((tx) => finish(tx, ctx, job, 'FAILED'));
    return;
  }
  const file = readFile(job.csv);
  if (typeof file === 'string') {
    await ctx.db.transaction(async (tx) => {
      await store.insertError(tx, job.id, fileError(file));
      await finish(tx, ctx, job, 'FAILED');
    });
    return;
  }
  await store.updateJob(ctx.db.k, job.id, { status: 'PROCESSING', total: file.rows.length, updated_at: iso(ctx.now) });

  for (let index = Number(job.processed); index < file.rows.length; index++) {
    await importRow(ctx, job.id, file, index);
  }
  await ctx.db.transaction((tx) => finish(tx, ctx, job, 'COMPLETED'));
}

/** One row: created with its progress in one transaction, or reported with its progress in another. */
async function importRow(ctx: Ctx, jobId: string, file: ParsedFile, index: number): Promise<void> {
  const cells = file.rows[index]!;
  const { body, missing } = rowToBody(file.header, cells);
  const line = index + 2; // the header is line 1
  const correlationId = typeof body.platformCustomerId === 'string' ? body.platformCustomerId : `row ${line}`;
  try {
    let prepared: Awaited<ReturnType<typeof prepareCustomer>>;
    try {
      prepared = await prepareCustomer(ctx, body);
    } catch (err) {
      // Empty required cells join the problems the API's own rules found in the row.
      if (err instanceof ApiError && err.status === 400 && missing.length > 0) {
        const found = ((err.details?.errors as FieldError[] | undefined) ?? []).filter(
          (e) => !missing.some((m) => m.field === (COLUMN_OF_FIELD[e.field] ?? e.field)),
        );
        throw apiError('INVALID_INPUT', `Row ${line} is invalid`, { errors: [...missing, ...asColumns(found)] });
      }
      throw err;
    }
    if (missing.length > 0) throw apiError('INVALID_INPUT', `Row ${line} is invalid`, { errors: missing });
    await createPreparedCustomer(ctx, prepared, (tx) => store.countRow(tx, jobId, index, true, iso(ctx.now)));
  } catch (err) {
    if (!(err instanceof ApiError)) throw err;
    const details =
      err.details?.errors !== undefined
        ? { ...err.details, errors: asColumns(err.details.errors as FieldError[]) }
        : (err.details ?? {});
    const entry: ErrorEntry = {
      code: err.code,
      message: err.message,
      details: { row: line, ...details },
      correlationId,
    };
    await ctx.db.transaction(async (tx) => {
      await store.insertError(tx, jobId, entry);
      await store.countRow(tx, jobId, index, false, iso(ctx.now));
    });
  }
}
