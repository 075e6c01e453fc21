import type { TranscriptLine } from "./transcript-lines.js";

/**
 * The local, deterministic summary used when no language model is available: for the user and for the
 * avatar, the sentences that carry the conversation's most frequent content words, in spoken order.
 * The same transcript always gives the same summary.
 */

export interface ExtractiveOptions {
  /** Sentences kept per role. */
  sentencesPerRole?: number;
  /** Longest kept sentence; longer ones are cut at a word boundary. */
  maxSentenceChars?: number;
}

const STOPWORDS = new Set(
  `a about above after again against all also am an and any are as at be because been before being
  below between both but by can could did do does doing down during each few for from further had has
  have having he her here hers herself him himself his how i if in into is it its itself just let me
  more most my myself no nor not now of off on once only or other our ours ourselves out over own same
  she should so some such than that the their theirs them themselves then there these they this those
  through to too under until up very was we were what when where which while who whom why will with
  would you your yours yourself yourselves okay ok yes yeah hello hi hey thanks thank please sure
  really well like just get got going know think want would could shall might must maybe great good`
    .split(/\s+/)
    .filter(Boolean),
);

/** Length (in words) below which a sentence is scored as if it had this many. */
const MIN_WORDS = 8;

const ROLE_LABELS: Record<string, string> = { user: "User", avatar: "Avatar" };

interface Sentence {
  role: string;
  text: string;
  position: number;
  terms: string[];
  words: number;
}

function splitSentences(text: string): string[] {
  return text
    .split(/(?<=[.!?…])\s+|\n+/u)
    .map((s) => s.trim())
    .filter((s) => s.length > 0);
}

function tokens(text: string): string[] {
  return text.toLowerCase().match(/[\p{L}\p{N}][\p{L}\p{N}'’-]*/gu) ?? [];
}

/** Content words: not a stopword, and three letters or more unless it holds a digit. */
function contentTerms(words: string[]): string[] {
  return words.filter((w) => !STOPWORDS.has(w) && (w.length >= 3 || /\p{N}/u.test(w)));
}

function cut(text: string, maxChars: number): string {
  const chars = Array.from(text);
  if (chars.length <= maxChars) return text;
  const head = chars.slice(0, maxChars - 1).join("");
  const boundary = head.lastIndexOf(" ");
  return `${(boundary > maxChars / 2 ? head.slice(0, boundary) : head).trimEnd()}…`;
}

export function extractiveSummary(lines: readonly TranscriptLine[], options: ExtractiveOptions = {}): string {
  const perRole = options.sentencesPerRole ?? 2;
  const maxSentenceChars = options.maxSentenceChars ?? 200;

  const sentences: Sentence[] = [];
  const seen = new Set<string>();
  for (const line of lines) {
    for (const text of splitSentences(line.text)) {
      const words = tokens(text);
      const key = `${line.role}\u0000${words.join(" ")}`;
      if (words.length === 0 || seen.has(key)) continue;
      seen.add(key);
      sentences.push({
        role: line.role,
        text,
        position: sentences.length,
        terms: contentTerms(words),
        words: words.length,
      });
    }
  }

  const frequency = new Map<string, number>();
  for (const s of sentences) for (const t of s.terms) frequency.set(t, (frequency.get(t) ?? 0) + 1);
  // A sentence scores by how often the conversation repeats its content words, damped by its length;
  // sentences shorter than MIN_WORDS get no bonus for being short ("Five days." is not a summary).
  const score = (s: Sentence) =>
    [...new Set(s.terms)].reduce((sum, t) => sum + (frequency.get(t) ?? 0), 0) /
    Math.sqrt(Math.max(s.words, MIN_WORDS));

  const roles = [...new Set(sentences.map((s) => s.role))].sort(
    (a, b) => roleRank(a) - roleRank(b) || a.localeCompare(b),
  );
  const parts: string[] = [];
  for (const role of roles) {
    const picked = sentences
      .filter((s) => s.role === role)
      .map((s) => ({ s, score: score(s) }))
      .sort((a, b) => b.score - a.score || a.s.position - b.s.position)
      .slice(0, perRole)
      .map((x) => x.s)
      .sort((a, b) => a.position - b.position);
    if (picked.length === 0) continue;
    parts.push(`${roleLabel(role)}: ${picked.map((s) => cut(s.text, maxSentenceChars)).join(" ")}`);
  }
  return parts.join("\n");
}

function roleRank(role: string): number {
  return role === "user" ? 0 : role === "avatar" ? 1 : 2;
}

function roleLabel(role: string): string {
  return ROLE_LABELS[role] ?? (role ? role[0]?.toUpperCase() + role.slice(1) : "Speaker");
}
