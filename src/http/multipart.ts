// Multipart bodies (file uploads). Only the plugins that hold upload routes accept them:
// each calls acceptMultipart(app) first, which registers @fastify/multipart in that plugin's
// own scope (Fastify keeps content-type parsers per plugin), so every other route keeps
// accepting JSON only. readMultipart() reads a whole form into memory and reports what is
// wrong with it as field errors instead of throwing, so each operation decides which status
// a broken upload gets.

import multipart from '@fastify/multipart';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { FieldError } from './errors.js';
import { NUL_MESSAGE } from './validation.js';

export interface UploadedFile {
  fieldName: string;
  fileName: string;
  data: Buffer;
  /** More bytes were sent than `fileBytesMax`; `data` holds only the first ones. */
  truncated: boolean;
}

export interface MultipartForm {
  /** Text fields by name; a repeated field keeps its first value. */
  fields: Record<string, string>;
  files: UploadedFile[];
  /** Problems of the form itself (not of its values): limits exceeded, malformed parts. */
  problems: FieldError[];
}

export interface MultipartLimits {
  fileBytesMax: number;
  filesMax?: number;
  fieldsMax?: number;
  fieldBytesMax?: number;
}

export async function acceptMultipart(app: FastifyInstance): Promise<void> {
  // note: size limits are reported by readMultipart, never thrown as 413s, because the
  // upload operations of the reference declare 400 (documents) or no client error at all.
  await app.register(multipart, { throwFileSizeLimit: false });
}

/** The whole form of a multipart request, or null when the request is not multipart. */
export async function readMultipart(request: FastifyRequest, limits: MultipartLimits): Promise<MultipartForm | null> {
  if (typeof request.isMultipart !== 'function' || !request.isMultipart()) return null;
  const fieldsMax = limits.fieldsMax ?? 32;
  const filesMax = limits.filesMax ?? 4;
  const form: MultipartForm = { fields: {}, files: [], problems: [] };
  try {
    const parts = request.parts({
      limits: {
        fileSize: limits.fileBytesMax,
        files: filesMax,
        fields: fieldsMax,
        fieldSize: limits.fieldBytesMax ?? 64 * 1024,
        parts: fieldsMax + filesMax,
      },
    });
    // U+0000 cannot be stored as text on PostgreSQL: a name or value holding it is a problem
    // of the form, and is kept with U+FFFD in its place, so nothing downstream meets it.
    const nul = (text: string) => text.includes('\u0000');
    const clean = (text: string) => text.replaceAll('\u0000', '\uFFFD');
    for await (const part of parts) {
      const fieldName = clean(part.fieldname);
      if (part.type === 'file') {
        const data = await part.toBuffer();
        if (nul(part.fieldname) || nul(part.filename))
          form.problems.push({ field: fieldName, message: `(its name or file name) ${NUL_MESSAGE}` });
        form.files.push({ fieldName, fileName: clean(part.filename), data, truncated: part.file.truncated });
      } else {
        const value = String(part.value);
        if (nul(part.fieldname) || nul(value)) form.problems.push({ field: fieldName, message: NUL_MESSAGE });
        if (part.valueTruncated) form.problems.push({ field: fieldName, message: 'is longer than the server accepts' });
        if (!Object.hasOwn(form.fields, fieldName)) form.fields[fieldName] = clean(value);
      }
    }
  } catch (err) {
    const code = (err as { code?: string }).code ?? '';
    const message = /LIMIT/.test(code)
      ? `has more parts than the server accepts (at most ${filesMax} files and ${fieldsMax} fields)`
      : 'is not a well-formed multipart/form-data body';
    form.problems.push({ field: 'body', message });
  }
  return form;
}
