import { splitSentences } from "@avatar/providers";

/**
 * Cuts streamed text into sentences as they complete: a sentence is complete once the next one has
 * begun (or the text has ended), so each can be synthesized while the model is still writing.
 */
export class SentenceBuffer {
  private text = "";

  constructor(private readonly maxChars = 250) {}

  /** The sentences this piece completed (possibly none). */
  push(piece: string): string[] {
    this.text += piece;
    const sentences = splitSentences(this.text, this.maxChars);
    if (sentences.length < 2) return [];
    const rest = sentences.pop() as string;
    // splitSentences trims: keep a trailing space, or the next piece would glue onto the last word.
    this.text = /\s$/.test(this.text) ? `${rest} ` : rest;
    return sentences;
  }

  /** Whatever is left, as sentences: the text has ended. */
  flush(): string[] {
    const sentences = splitSentences(this.text, this.maxChars);
    this.text = "";
    return sentences;
  }
}
