/**
 * A bus subject as a metric label: tokens that are ids (UUIDs, long hex or base64-ish strings) become
 * `*`, so `rt.<session>.in` is one series, not one per session.
 */
export function subjectLabel(subject: string): string {
  let label = recent.get(subject);
  if (label === undefined) {
    label = subject
      .split(".")
      .map((token) => (isId(token) ? "*" : token))
      .join(".");
    if (recent.size >= RECENT_MAX) recent.clear();
    recent.set(subject, label);
  }
  return label;
}

/**
 * The labels of the subjects seen lately: every message is counted by its subject's label, and the
 * subjects of a realtime session (`rt.<id>.in`, `rt.<id>.out`) repeat for as long as it runs.
 */
const recent = new Map<string, string>();
const RECENT_MAX = 10_000;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

function isId(token: string): boolean {
  return UUID.test(token) || (token.length >= 16 && /\d/.test(token) && /^[A-Za-z0-9_-]+$/.test(token));
}
