import type { EgressFetch, Logger, SecretDestinations } from "@avatar/runtime";
import { extractiveSummary } from "./extractive-summarizer.js";
import { type AgentsReader, chatCompletionSummary, findSpaceModel } from "./llm-summarizer.js";
import type { TranscriptLine } from "./transcript-lines.js";

export interface Summary {
  text: string;
  /** Which path wrote it. */
  source: "llm" | "extractive";
}

export interface Summarizer {
  summarize(spaceId: string, lines: readonly TranscriptLine[]): Promise<Summary>;
}

export interface SummarizerOptions {
  /** The agents service; without it every summary is extractive. */
  agents?: AgentsReader;
  log: Logger;
  preferredLlmName?: string | undefined;
  llmTimeoutMs: number;
  /** The egress guard every request to a configuration's base_url goes through. */
  egress: EgressFetch;
  /** Where each secret may be sent (its provider's hosts, or the hosts bound to it). */
  destinations: SecretDestinations;
}

/**
 * The space's language model when one is available (see findSpaceModel); on any failure of that path,
 * or without a model, the local extractive summary.
 */
export function createSummarizer(options: SummarizerOptions): Summarizer {
  const { agents, log } = options;
  return {
    async summarize(spaceId, lines) {
      if (agents) {
        try {
          const model = await findSpaceModel(agents, spaceId, options.destinations, options.preferredLlmName);
          if (model) {
            const text = await chatCompletionSummary(model, lines, {
              timeoutMs: options.llmTimeoutMs,
              fetch: options.egress,
            });
            return { text, source: "llm" };
          }
        } catch (err) {
          // Only the message: the error never carries the key, but a cause might carry a request.
          log.warn("language-model summary failed; using the extractive summary", {
            space_id: spaceId,
            reason: err instanceof Error ? err.message : String(err),
          });
        }
      }
      return { text: extractiveSummary(lines), source: "extractive" };
    },
  };
}
