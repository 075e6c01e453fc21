/** The rolled-up memory_content: every episode's summary in sequence order, newest kept when too long. */

export interface RollUpEpisode {
  sequence_num: number;
  summary: string;
  created_at: Date;
}

export function rollUp(episodes: readonly RollUpEpisode[], maxChars: number): string {
  const blocks = [...episodes]
    .sort((a, b) => a.sequence_num - b.sequence_num)
    .map((e) => `Session ${e.sequence_num} (${e.created_at.toISOString().slice(0, 10)}):\n${e.summary}`);
  const kept: string[] = [];
  let used = 0;
  for (let i = blocks.length - 1; i >= 0; i--) {
    const block = blocks[i] as string;
    if (kept.length > 0 && used + block.length + 2 > maxChars) break;
    kept.unshift(block);
    used += block.length + 2;
  }
  const compose = () => {
    const omitted = blocks.length - kept.length;
    const note = omitted > 0 ? `(${omitted} earlier session${omitted === 1 ? "" : "s"} left out)\n\n` : "";
    return note + kept.join("\n\n");
  };
  let text = compose();
  // The note about left-out sessions takes room too.
  while (kept.length > 1 && text.length > maxChars) {
    kept.shift();
    text = compose();
  }
  const chars = Array.from(text);
  return chars.length <= maxChars ? text : `${chars.slice(0, maxChars - 1).join("")}…`;
}
