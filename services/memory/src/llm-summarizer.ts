import type {
  ListLlmConfigurationsResponse,
  LlmConfiguration,
  RevealSecretResponse,
} from "@avatar/contracts/agents";
import { SecretType } from "@avatar/contracts/agents";
import {
  appendPath,
  EgressError,
  type EgressFetch,
  type SecretDestinations,
  scrubSecrets,
} from "@avatar/runtime";
import { formatTranscript, type TranscriptLine } from "./transcript-lines.js";

/**
 * Summaries from the space's own language model: its LLM configuration (any OpenAI-compatible
 * chat-completions endpoint) and the key held in the configuration's secret. The key is used for the
 * one request and never logged.
 */

/** What the memory service reads from the agents service (a Connect client satisfies it). */
export interface AgentsReader {
  listLlmConfigurations(request: { spaceId: string }): Promise<ListLlmConfigurationsResponse>;
  revealSecret(request: { spaceId: string; secretId: string }): Promise<RevealSecretResponse>;
}

export interface ChatModel {
  configurationId: string;
  /** Without a trailing slash; `/chat/completions` goes after it. */
  baseUrl: string;
  model: string;
  apiKey: string;
}

export interface ChatOptions {
  timeoutMs: number;
  /** The checked fetch (egress guard): a configuration's base_url reaches only allowed addresses. */
  fetch: EgressFetch;
  /** The transcript sent to the model is cut to this many characters (its start and end kept). */
  maxTranscriptChars?: number;
  /** Longest summary kept from the model's answer. */
  maxSummaryChars?: number;
}

export const SUMMARY_INSTRUCTIONS = [
  "You write the long-term memory of an avatar that talks with people.",
  "Summarise the conversation below in at most five short sentences of plain text, in the third person:",
  "who the user is, what they wanted, the facts and preferences they shared, and what was agreed or left open.",
  "Do not add anything that is not in the conversation.",
].join(" ");

/**
 * The space's model, when it has an LLM configuration whose secret can be revealed; undefined otherwise.
 * A ChatCompletionError when the secret may not be sent to the configuration's base_url (finding 2 of
 * the security review: only to its provider's hosts or the hosts bound to it).
 */
export async function findSpaceModel(
  agents: AgentsReader,
  spaceId: string,
  destinations: SecretDestinations,
  preferredName?: string,
): Promise<ChatModel | undefined> {
  const { llmConfigurations } = await agents.listLlmConfigurations({ spaceId });
  const chosen: LlmConfiguration | undefined =
    (preferredName ? llmConfigurations.find((c) => c.displayName === preferredName) : undefined) ??
    llmConfigurations[0];
  if (!chosen?.baseUrl || !chosen.modelName || !chosen.secretId) return undefined;
  const { secretValue, secret } = await agents.revealSecret({ spaceId, secretId: chosen.secretId });
  if (!secretValue) return undefined;
  const binding = {
    secretType: secret?.secretType ?? SecretType.UNSPECIFIED,
    allowedHosts: secret?.allowedHosts ?? [],
  };
  if (!destinations.allows(binding, chosen.baseUrl)) {
    throw new ChatCompletionError("the configuration's secret may not be sent to its base_url's host");
  }
  return {
    configurationId: chosen.id,
    baseUrl: chosen.baseUrl.replace(/\/+$/, ""),
    model: chosen.modelName,
    apiKey: secretValue,
  };
}

export class ChatCompletionError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "ChatCompletionError";
  }
}

/** One non-streaming `POST {base_url}/chat/completions`; the answer's text, or a ChatCompletionError. */
export async function chatCompletionSummary(
  model: ChatModel,
  lines: readonly TranscriptLine[],
  options: ChatOptions,
): Promise<string> {
  const body = {
    model: model.model,
    stream: false,
    messages: [
      { role: "system", content: SUMMARY_INSTRUCTIONS },
      { role: "user", content: formatTranscript(lines, options.maxTranscriptChars ?? 32_000) },
    ],
  };
  let res: Response;
  try {
    res = await options.fetch(appendPath(model.baseUrl, "chat/completions"), {
      method: "POST",
      headers: {
        "content-type": "application/json",
        accept: "application/json",
        authorization: `Bearer ${model.apiKey}`,
      },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(options.timeoutMs),
    });
  } catch (err) {
    if (err instanceof EgressError) throw new ChatCompletionError(`base_url refused: ${err.message}`);
    const reason = err instanceof Error && err.name === "TimeoutError" ? "timed out" : "could not be reached";
    throw new ChatCompletionError(`chat completions endpoint ${reason}`, { cause: err });
  }
  if (!res.ok) {
    await res.body?.cancel();
    throw new ChatCompletionError(`chat completions endpoint answered ${res.status}`);
  }
  let answer: unknown;
  try {
    answer = await res.json();
  } catch (err) {
    throw new ChatCompletionError("chat completions endpoint answered something that is not JSON", {
      cause: err,
    });
  }
  // A model may echo what it was sent, the key included: nothing of it is stored (finding 2).
  const text = scrubSecrets(answerText(answer), [model.apiKey]).replace(/\s+\n/g, "\n").trim();
  if (!text) throw new ChatCompletionError("chat completions answer holds no text");
  return cutSummary(text, options.maxSummaryChars ?? 1_500);
}

/** `choices[0].message.content`: a string, or (some compatible servers) a list of text parts. */
function answerText(answer: unknown): string {
  const choices = (answer as { choices?: unknown })?.choices;
  const first = Array.isArray(choices) ? (choices[0] as { message?: { content?: unknown } }) : undefined;
  const content = first?.message?.content;
  if (typeof content === "string") return content;
  if (Array.isArray(content)) {
    return content
      .map((part) =>
        typeof (part as { text?: unknown })?.text === "string" ? (part as { text: string }).text : "",
      )
      .join("");
  }
  return "";
}

function cutSummary(text: string, maxChars: number): string {
  const chars = Array.from(text);
  return chars.length <= maxChars
    ? text
    : `${chars
        .slice(0, maxChars - 1)
        .join("")
        .trimEnd()}…`;
}
