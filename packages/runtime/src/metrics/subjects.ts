/**
 * A bus subject as a metric label: tokens that are ids (UUIDs, long hex or base64-ish strings) become
 * `*`, so `rt.<session>.in` is one series, not one per session.
 */
export function subjectLabel(subject: string): string {
  return subject
    .split(".")
    .map((token) => (isId(token) ? "*" : token))
    .join(".");
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

function isId(token: string): boolean {
  return UUID.test(token) || (token.length >= 16 && /\d/.test(token) && /^[A-Za-z0-9_-]+$/.test(token));
}
