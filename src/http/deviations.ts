// Where railyard knowingly answers outside the reference, and why. One list, read by the
// route declarations' check (test/http/operations.test.ts), the fuzz suite and CI's
// conformance gate (scripts/conformance-gate.mjs), so each exception is made in one place.

import deviations from './reference-deviations.json' with { type: 'json' };

export interface UndeclaredStatus {
  operationId: string;
  method: string;
  path: string;
  status: number;
  why: string;
}

/** Statuses railyard answers that the reference does not declare for the operation. */
export const UNDECLARED_STATUSES: readonly UndeclaredStatus[] = deviations.undeclaredStatuses;

export function isUndeclaredInReference(operationId: string, status: number): boolean {
  return UNDECLARED_STATUSES.some((d) => d.operationId === operationId && d.status === status);
}
