/**
 * A language model on any endpoint that speaks the widely implemented chat-completions protocol:
 * `POST {baseUrl}/chat/completions` with `stream: true`, answered by server-sent events whose `data` is a
 * JSON chunk (`choices[0].delta.content`) and finally `[DONE]`. vendorB's chat models, every stored LLM
 * configuration (base_url + model_name + key) and local servers for offline use all speak it.
 */
import { errorBodyMessage, errorForStatus, kindForErrorObject } from "../http-errors.js";
import { type ChatRequest, type LanguageModel, ProviderError } from "../types.js";
import { readSse } from "./sse.js";

export interface ChatCompletionsOptions {
  /** The API root the paths hang from, e.g. `https://host/v1` or `http://127.0.0.1:8080/v1`. */
  baseUrl: string;
  /** Sent as `Authorization: Bearer`; local servers usually need none. */
  apiKey?: string;
  /** The provider name in errors, e.g. "vendorB" or "llm-configuration". */
  name?: string;
  /** Time allowed until the response headers arrive. Default 30 s. */
  timeoutMs?: number;
  /** Time allowed between two pieces of the stream. Default 30 s. */
  idleTimeoutMs?: number;
  /**
   * The request field for the answer's length limit. Reasoning models (vendorB's gpt-5 family) take
   * `max_completion_tokens`; most compatible servers take `max_tokens`. Default `max_tokens`.
   */
  maxTokensField?: "max_tokens" | "max_completion_tokens";
  /**
   * How the request is made; the global fetch by default. A customer-supplied base URL must come with a
   * checked fetch (the runtime's egress guard), so the request can only reach where the operator allows.
   */
  fetch?: (
    url: string,
    init: { method: string; headers: Record<string, string>; body: string; signal: AbortSignal },
  ) => Promise<Response>;
}

interface StreamChunk {
  choices?: { delta?: { content?: unknown }; finish_reason?: unknown }[];
  error?: { message?: unknown; type?: unknown; code?: unknown };
}

export class ChatCompletionsModel implements LanguageModel {
  readonly name: string;

  constructor(private readonly options: ChatCompletionsOptions) {
    this.name = options.name ?? "chat-completions";
  }

  /**
   * Yields the answer's text pieces in order. Failures throw a ProviderError; aborting `signal` throws
   * the signal's reason and closes the connection, as does leaving the loop early.
   */
  async *stream(request: ChatRequest, signal?: AbortSignal): AsyncGenerator<string> {
    signal?.throwIfAborted();
    const controller = new AbortController();
    let timedOut: string | undefined;
    let timer: NodeJS.Timeout | undefined;
    const arm = (ms: number, what: string) => {
      clearTimeout(timer);
      timer = setTimeout(() => {
        timedOut = what;
        controller.abort();
      }, ms);
    };
    const onAbort = () => controller.abort(signal?.reason);
    signal?.addEventListener("abort", onAbort, { once: true });
    const idleMs = this.options.idleTimeoutMs ?? 30_000;
    try {
      arm(this.options.timeoutMs ?? 30_000, `no response within ${this.options.timeoutMs ?? 30_000} ms`);
      const response = await this.post(request, controller.signal);
      if (!response.ok) {
        const detail = errorBodyMessage(await response.text());
        throw errorForStatus(this.name, response.status, detail, response.headers.get("retry-after"));
      }
      const type = response.headers.get("content-type") ?? "";
      if (!type.includes("text/event-stream") || !response.body) {
        throw new ProviderError(this.name, `${this.name}: expected an event stream, got "${type}"`);
      }
      arm(idleMs, `stream idle for ${idleMs} ms`);
      let finished = false;
      for await (const event of readSse(response.body, () => arm(idleMs, `stream idle for ${idleMs} ms`))) {
        if (event.data === "[DONE]") {
          finished = true;
          break;
        }
        const choice = this.parse(event.data).choices?.[0];
        const content = choice?.delta?.content;
        if (typeof content === "string" && content !== "") {
          // The idle clock measures the provider, not a consumer that takes its time with a piece.
          clearTimeout(timer);
          yield content;
          arm(idleMs, `stream idle for ${idleMs} ms`);
        }
        if (typeof choice?.finish_reason === "string") finished = true;
      }
      if (!finished)
        throw new ProviderError(this.name, `${this.name}: the stream ended before the answer did`);
    } catch (err) {
      throw this.failure(err, signal, timedOut);
    } finally {
      clearTimeout(timer);
      signal?.removeEventListener("abort", onAbort);
      controller.abort();
    }
  }

  private post(request: ChatRequest, signal: AbortSignal): Promise<Response> {
    const body: Record<string, unknown> = { model: request.model, messages: request.messages, stream: true };
    if (request.temperature !== undefined) body.temperature = request.temperature;
    if (request.maxTokens !== undefined)
      body[this.options.maxTokensField ?? "max_tokens"] = request.maxTokens;
    const headers: Record<string, string> = {
      "content-type": "application/json",
      accept: "text/event-stream",
    };
    if (this.options.apiKey) headers.authorization = `Bearer ${this.options.apiKey}`;
    // The path goes onto the base URL's path; a query of the base URL stays a query.
    const url = new URL(this.options.baseUrl);
    url.pathname = `${url.pathname.replace(/\/+$/, "")}/chat/completions`;
    const send = this.options.fetch ?? fetch;
    return send(url.href, { method: "POST", headers, body: JSON.stringify(body), signal });
  }

  private parse(data: string): StreamChunk {
    let chunk: StreamChunk;
    try {
      chunk = JSON.parse(data) as StreamChunk;
    } catch (err) {
      throw new ProviderError(
        this.name,
        `${this.name}: malformed stream chunk: ${data.slice(0, 100)}`,
        "unavailable",
        {
          cause: err,
        },
      );
    }
    if (typeof chunk !== "object" || chunk === null) {
      throw new ProviderError(this.name, `${this.name}: malformed stream chunk: ${data.slice(0, 100)}`);
    }
    if (chunk.error) {
      const message = typeof chunk.error.message === "string" ? chunk.error.message : "error in stream";
      throw new ProviderError(this.name, `${this.name}: ${message}`, kindForErrorObject(chunk.error));
    }
    return chunk;
  }

  private failure(err: unknown, signal: AbortSignal | undefined, timedOut: string | undefined): unknown {
    if (err instanceof ProviderError) return err;
    if (signal?.aborted) return signal.reason;
    if (timedOut)
      return new ProviderError(this.name, `${this.name}: ${timedOut}`, "unavailable", { cause: err });
    const cause = err instanceof Error && err.cause instanceof Error ? `: ${err.cause.message}` : "";
    const message = err instanceof Error ? err.message : String(err);
    return new ProviderError(this.name, `${this.name}: ${message}${cause}`, "unavailable", { cause: err });
  }
}
