import type { TranscriptEntry } from "@avatar/contracts/sessions";

/** One spoken turn as the summarizers see it. */
export interface TranscriptLine {
  /** `user` or `avatar` (other roles are kept as they come). */
  role: string;
  text: string;
}

export function toLines(entries: readonly TranscriptEntry[]): TranscriptLine[] {
  return entries
    .map((e) => ({ role: e.role.trim().toLowerCase(), text: e.transcript.replace(/\s+/g, " ").trim() }))
    .filter((l) => l.text.length > 0);
}

/** "user: ..." lines; over `maxChars` the middle of the conversation is left out (the start and the end stay). */
export function formatTranscript(lines: readonly TranscriptLine[], maxChars: number): string {
  const rendered = lines.map((l) => `${l.role}: ${l.text}`);
  const total = rendered.reduce((n, l) => n + l.length + 1, 0);
  if (total <= maxChars) return rendered.join("\n");
  const half = Math.floor(maxChars / 2);
  const head: string[] = [];
  let used = 0;
  for (const line of rendered) {
    if (used + line.length + 1 > half) break;
    head.push(line);
    used += line.length + 1;
  }
  const tail: string[] = [];
  used = 0;
  for (let i = rendered.length - 1; i >= head.length; i--) {
    const line = rendered[i] as string;
    if (used + line.length + 1 > half) break;
    tail.unshift(line);
    used += line.length + 1;
  }
  return [...head, "[...]", ...tail].join("\n");
}
