/**
 * Splits text into sentences so synthesis can start on the first one while the rest wait. Sentences
 * end at . ! ? … (and the CJK full stops) followed by a space or the end; common abbreviations and
 * decimal numbers do not end one. A sentence longer than `maxChars` is cut at its last clause mark
 * (, ; :) or space before the limit.
 */

const ABBREVIATIONS = new Set(["mr", "mrs", "ms", "dr", "prof", "st", "jr", "sr", "vs", "etc", "e.g", "i.e"]);
const TERMINALS = ".!?…";
const CJK_TERMINALS = "。！？";
const CLOSERS = "\"'”’)]»";

export function splitSentences(text: string, maxChars = 250): string[] {
  const normalized = text.replace(/\s+/g, " ").trim();
  const sentences: string[] = [];
  let start = 0;
  for (let i = 0; i < normalized.length; i++) {
    const ch = normalized[i] as string;
    if (CJK_TERMINALS.includes(ch)) {
      let end = i + 1;
      while (end < normalized.length && CLOSERS.includes(normalized[end] as string)) end++;
      sentences.push(normalized.slice(start, end));
      start = end;
      i = end - 1;
      continue;
    }
    if (!TERMINALS.includes(ch)) continue;
    let end = i + 1;
    while (end < normalized.length && (TERMINALS + CLOSERS).includes(normalized[end] as string)) end++;
    const atBoundary = end === normalized.length || normalized[end] === " ";
    if (atBoundary && !(ch === "." && endsWithAbbreviation(normalized.slice(start, i)))) {
      sentences.push(normalized.slice(start, end));
      start = end;
    }
    i = end - 1;
  }
  sentences.push(normalized.slice(start));
  return sentences
    .map((s) => s.trim())
    .flatMap((s) => cutLong(s, maxChars))
    .filter((s) => s.length > 0);
}

function endsWithAbbreviation(before: string): boolean {
  const word = before.slice(before.lastIndexOf(" ") + 1).toLowerCase();
  return ABBREVIATIONS.has(word) || /^[a-z]$/i.test(word);
}

function cutLong(sentence: string, maxChars: number): string[] {
  const pieces: string[] = [];
  let rest = sentence;
  while (rest.length > maxChars) {
    const window = rest.slice(0, maxChars);
    const clause = Math.max(window.lastIndexOf(", "), window.lastIndexOf("; "), window.lastIndexOf(": "));
    const space = window.lastIndexOf(" ");
    const cut = clause > maxChars / 3 ? clause + 1 : space > 0 ? space : maxChars;
    pieces.push(rest.slice(0, cut).trim());
    rest = rest.slice(cut).trim();
  }
  pieces.push(rest);
  return pieces;
}
