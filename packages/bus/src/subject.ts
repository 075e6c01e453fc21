/**
 * NATS subject rules, shared by both bus implementations so they accept and match the same subjects.
 * Tokens are dot-separated and non-empty; `*` matches exactly one token, `>` (last token only) one or more.
 */

function tokensOf(subject: string): string[] {
  const tokens = subject.split(".");
  if (subject.length === 0 || tokens.some((t) => t.length === 0 || /\s/.test(t))) {
    throw new Error(`invalid subject "${subject}"`);
  }
  return tokens;
}

/** A subject to publish to: no wildcards. */
export function assertPublishSubject(subject: string): void {
  if (tokensOf(subject).some((t) => t === "*" || t === ">")) {
    throw new Error(`invalid subject "${subject}": wildcards are only allowed when subscribing`);
  }
}

/** A subject to subscribe to: wildcards allowed, `>` only as the last token. */
export function assertSubscribeSubject(subject: string): void {
  const tokens = tokensOf(subject);
  if (tokens.slice(0, -1).includes(">")) {
    throw new Error(`invalid subject "${subject}": ">" must be the last token`);
  }
}

export function subjectMatches(pattern: string, subject: string): boolean {
  const want = pattern.split(".");
  const have = subject.split(".");
  for (let i = 0; i < want.length; i++) {
    const token = want[i];
    if (token === ">") return have.length > i;
    if (i >= have.length) return false;
    if (token !== "*" && token !== have[i]) return false;
  }
  return want.length === have.length;
}
