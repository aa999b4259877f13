// What the checks of a stablecoin write found wrong with its request, gathered so that one
// 400 names every invalid field: the schema's findings, the service's own, and those of the
// accounts and links the request names.

import { ApiError, apiError, type ErrorCode, type FieldError, invalidInput } from '../../http/errors.js';

interface Finding {
  error: FieldError;
  /** The code the finding answers with when it is the only kind of problem. */
  code: ErrorCode;
  /** The refusal a check threw, answered unchanged when it is the only problem. */
  refusal?: ApiError | undefined;
}

function fieldErrorsOf(err: ApiError): FieldError[] {
  const errors = err.details?.errors;
  return Array.isArray(errors) ? (errors as FieldError[]) : [];
}

export class Findings {
  private readonly found: Finding[] = [];
  /**
   * The first refusal that names no field to list (a reference to nothing, 404, or a link
   * that cannot be used): answered when nothing else is wrong.
   */
  private aside: ApiError | undefined;
  private readonly missingErrors: FieldError[] = [];

  /** `schemaErrors`: what the route's schema found (`attachedFieldErrors`). */
  constructor(schemaErrors: FieldError[] = []) {
    for (const error of schemaErrors) this.found.push({ error, code: 'INVALID_INPUT' });
  }

  /** Whether some finding names `field` already (a field the schema refused is named once). */
  has(field: string): boolean {
    return this.found.some((f) => f.error.field === field);
  }

  get empty(): boolean {
    return this.found.length === 0;
  }

  add(field: string, message: string, code: ErrorCode = 'INVALID_INPUT'): void {
    if (!this.has(field)) this.found.push({ error: { field, message }, code });
  }

  /**
   * Takes in what a check threw: a 404, or a 400 that names no field, is kept aside; another
   * 400 becomes a finding; anything else goes on up.
   */
  take(err: unknown): void {
    if (!(err instanceof ApiError) || (err.status !== 400 && err.status !== 404)) throw err;
    const errors = fieldErrorsOf(err);
    if (err.status === 404 || errors.length === 0) {
      this.aside ??= err;
      // The field of a reference to nothing is named too when the answer is a 400.
      if (err.status === 404) this.missingErrors.push(...errors);
      return;
    }
    for (const error of errors) if (!this.has(error.field)) this.found.push({ error, code: err.code, refusal: err });
  }

  /**
   * Answers what was found: nothing wrong but what was kept aside is that refusal; one kind
   * of problem keeps its own code (an amount-only problem INVALID_AMOUNT, an unverified
   * account its own refusal); several are one 400 INVALID_INPUT naming every field.
   */
  throwIfAny(): void {
    if (this.found.length === 0) {
      if (this.aside !== undefined) throw this.aside;
      return;
    }
    const all = [...this.found];
    for (const error of this.missingErrors)
      if (!all.some((f) => f.error.field === error.field)) all.push({ error, code: 'REFERENCE_NOT_FOUND' });
    const first = all[0]!;
    const errors = all.map((f) => f.error);
    if (first.code !== 'INVALID_INPUT' && all.every((f) => f.code === first.code)) {
      if (first.refusal !== undefined && all.every((f) => f.refusal === first.refusal)) throw first.refusal;
      throw apiError(first.code, `${first.error.field} ${first.error.message}`, { errors });
    }
    throw invalidInput(errors);
  }
}
