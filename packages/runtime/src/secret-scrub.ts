/**
 * Scrubbing stored secret values out of text that came from a provider (an error message, a model's
 * answer, a transcript) before it is logged, shown or stored. A value is found in the forms it takes when
 * echoed: as it is, JSON-escaped (with or without `\/`, or every character as `\uXXXX`) and URL-encoded.
 */

export const SCRUBBED = "[secret]";

/** Values shorter than this are not scrubbed: they would match ordinary words. */
const MIN_SCRUB_LENGTH = 4;

/** Every form of `value` worth looking for, longest first. */
export function secretForms(value: string): string[] {
  if (value.length < MIN_SCRUB_LENGTH) return [];
  const json = JSON.stringify(value).slice(1, -1);
  // JSON.stringify leaves non-ASCII as it is; encoders that escape it write \uXXXX per UTF-16 unit.
  const asciiJson = json.replace(
    /[^\x20-\x7e]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`,
  );
  const allEscaped = Array.from(
    { length: value.length },
    (_, i) => `\\u${value.charCodeAt(i).toString(16).padStart(4, "0")}`,
  ).join("");
  const forms = new Set([
    value,
    json,
    json.replaceAll("/", "\\/"),
    asciiJson,
    allEscaped,
    allEscaped.toUpperCase().replaceAll("\\U", "\\u"),
    encodeURIComponent(value),
  ]);
  return [...forms].sort((a, b) => b.length - a.length);
}

/** `text` with every form of every value replaced by SCRUBBED. */
export function scrubSecrets(text: string, values: Iterable<string>): string {
  let out = text;
  for (const value of values) {
    for (const form of secretForms(value)) out = out.split(form).join(SCRUBBED);
  }
  return out;
}

/** How many characters at the end of `text` could be the start of a form of a value (0 usually). */
export function partialSecretTail(text: string, values: Iterable<string>): number {
  let longest = 0;
  for (const value of values) {
    for (const form of secretForms(value)) {
      for (let k = Math.min(form.length - 1, text.length); k > longest; k--) {
        if (text.charCodeAt(text.length - 1) === form.charCodeAt(k - 1) && text.endsWith(form.slice(0, k))) {
          longest = k;
          break;
        }
      }
    }
  }
  return longest;
}

/**
 * Scrubs a text that arrives in pieces (a model's streamed answer): a value split across two pieces is
 * still caught, because a tail that could be the start of a value is held back until the next piece (or
 * the end) shows whether it completes one. Text that cannot be part of a value passes at once. `values`
 * is read at every piece, so values added while the stream runs count from then on.
 */
export async function* scrubStream(
  pieces: AsyncIterable<string>,
  values: ReadonlySet<string>,
): AsyncGenerator<string> {
  let held = "";
  for await (const piece of pieces) {
    const text = scrubSecrets(held + piece, values);
    const keep = partialSecretTail(text, values);
    held = text.slice(text.length - keep);
    const ready = text.slice(0, text.length - keep);
    if (ready !== "") yield ready;
  }
  if (held !== "") yield scrubSecrets(held, values);
}
