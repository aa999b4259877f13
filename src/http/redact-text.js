// Redaction of JSON text by member name (the names and why: redaction.ts). Plain JavaScript:
// the request journal's thread (src/modules/requests/journal-worker.js) loads it by path and
// redacts the bodies it writes there, off the requests' thread.

/**
 * A function that answers JSON text with the value of every member named in `names`, at any
 * depth, replaced by `replacement` (a null stays null). Text that names none of them comes
 * back as it is, without a parse (most bodies); so does text that is not JSON.
 */
export function textRedactor(names, replacement) {
  const secret = new Set(names);
  const mention = new RegExp(`"(?:${names.join('|')})"\\s*:`);
  return (text) => {
    if (!mention.test(text)) return text;
    let value;
    try {
      value = JSON.parse(text, (key, member) => (secret.has(key) && member !== null ? replacement : member));
    } catch {
      return text;
    }
    return JSON.stringify(value);
  };
}
