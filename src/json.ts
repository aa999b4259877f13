// JSON texts read far more often than they change (a platform's configuration is read by
// every payment) are parsed once per distinct text. The parsed value is shared by every
// reader, so it is frozen: a reader that tried to change it would throw instead of changing
// what the others see.

const CACHED_TEXTS_MAX = 64;
const parsed = new Map<string, unknown>();

function deepFreeze(value: unknown): void {
  if (value === null || typeof value !== 'object' || Object.isFrozen(value)) return;
  Object.freeze(value);
  for (const child of Object.values(value)) deepFreeze(child);
}

/** JSON.parse of `text`, frozen and kept for the next reader of the same text. */
export function parseShared<T>(text: string): T {
  let value = parsed.get(text);
  if (value === undefined) {
    value = JSON.parse(text) as unknown;
    deepFreeze(value);
    if (parsed.size >= CACHED_TEXTS_MAX) parsed.delete(parsed.keys().next().value!);
    parsed.set(text, value);
  }
  return value as T;
}

/**
 * The entry of `table` under `key`, only when the table itself has that key: a key taken
 * from a request, such as "constructor" or "__proto__", must not find Object's members.
 */
export function ownEntry<V>(table: Readonly<Record<string, V>>, key: string): V | undefined {
  return Object.hasOwn(table, key) ? table[key] : undefined;
}

/**
 * `value` when it is a plain JSON object (not null, not an array), else undefined: for input
 * whose shape is not known yet. `T` names the shape the caller expects of it.
 */
export function plainObject<T extends object = Record<string, unknown>>(value: unknown): T | undefined {
  return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as T) : undefined;
}

// A payment's last event carries the same view the response shows: its text is written once
// and read twice. Only events register texts, and a view is not changed after its event is
// recorded; an object stringified nowhere else gets no entry.
const writtenTexts = new WeakMap<object, string>();

/** JSON.stringify of `value`, remembered for `writtenText` (an event's data). */
export function writeText(value: unknown): string {
  const text = JSON.stringify(value);
  if (typeof value === 'object' && value !== null) writtenTexts.set(value, text);
  return text;
}

/** The text `writeText` made of this very object, else JSON.stringify of it. */
export function writtenText(value: unknown): string {
  return (typeof value === 'object' && value !== null && writtenTexts.get(value)) || JSON.stringify(value);
}
