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
  return tokensMatch(pattern.split("."), subject.split("."));
}

function tokensMatch(want: readonly string[], have: readonly string[]): boolean {
  for (let i = 0; i < want.length; i++) {
    const token = want[i];
    if (token === ">") return have.length > i;
    if (i >= have.length) return false;
    if (token !== "*" && token !== have[i]) return false;
  }
  return want.length === have.length;
}

/**
 * Items (subscriptions) by subject pattern. A published subject finds the items of its own literal
 * pattern in one lookup and is matched only against the wildcard patterns, so per-session subscriptions
 * cost a publish nothing. Matches come in the order the items were added.
 */
export class SubjectIndex<T> {
  readonly #literal = new Map<string, Set<T>>();
  readonly #wildcard = new Map<T, readonly string[]>();
  readonly #order = new Map<T, number>();
  #added = 0;

  add(pattern: string, item: T): void {
    this.#order.set(item, this.#added++);
    const tokens = pattern.split(".");
    if (tokens.includes("*") || tokens.includes(">")) {
      this.#wildcard.set(item, tokens);
      return;
    }
    const items = this.#literal.get(pattern);
    if (items) items.add(item);
    else this.#literal.set(pattern, new Set([item]));
  }

  delete(pattern: string, item: T): void {
    this.#order.delete(item);
    if (this.#wildcard.delete(item)) return;
    const items = this.#literal.get(pattern);
    items?.delete(item);
    if (items?.size === 0) this.#literal.delete(pattern);
  }

  match(subject: string): T[] {
    const found = [...(this.#literal.get(subject) ?? [])];
    if (this.#wildcard.size > 0) {
      const have = subject.split(".");
      for (const [item, want] of this.#wildcard) if (tokensMatch(want, have)) found.push(item);
    }
    if (found.length > 1) found.sort((a, b) => (this.#order.get(a) ?? 0) - (this.#order.get(b) ?? 0));
    return found;
  }
}
