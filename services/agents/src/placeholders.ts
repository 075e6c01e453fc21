/**
 * Dynamic variables are `${name}` placeholders in a context's prompt and opening text; the token
 * endpoint requires a value for each. A name is an identifier: a letter or underscore, then letters,
 * digits or underscores. Anything else between `${` and `}` is plain text.
 */
const PLACEHOLDER = /\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g;

/** The distinct placeholder names of the texts, sorted. */
export function placeholderNames(...texts: string[]): string[] {
  const names = new Set<string>();
  for (const text of texts) {
    for (const match of text.matchAll(PLACEHOLDER)) {
      if (match[1] !== undefined) names.add(match[1]);
    }
  }
  return [...names].sort();
}
