import type { CapturedRequest } from '../../http/journal.js';

/** What makes the rows: the secrets redacted on each side, their replacement, the longest body kept. */
export interface JournalRowsConfig {
  secrets: { request: readonly string[]; response: readonly string[] };
  redacted: string;
  bodyCharsMax: number;
}

/** An entry's answer as stored: the columns an amendment rewrites. */
export interface AnswerColumns {
  status: number | null;
  error_code: string | null;
  duration_ms: number;
  response_body: string | null;
  fault: string | null;
  answered: 0 | 1;
}

export function journalRows(config: JournalRowsConfig): {
  /** The row's values in the order of store.JOURNAL_COLUMNS. */
  valuesOf(entry: CapturedRequest): unknown[];
  answerColumns(entry: CapturedRequest): AnswerColumns;
};

/** An entry as it travels to the journal's thread. */
export type WireEntry = unknown[];
/** The entry as an array of its fields, for the journal's thread. */
export function toWire(entry: CapturedRequest): WireEntry;
/** The entry again from toWire's array. */
export function fromWire(wire: WireEntry): CapturedRequest;
