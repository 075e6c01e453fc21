import { type ChatMessage, ProviderError } from "@avatar/providers";
import type { Clients } from "@avatar/runtime";
import { ConnectError } from "@connectrpc/connect";
import { plainVariables } from "../providers/conversation.js";
import type { SessionProviders } from "../providers/session-providers.js";
import type { SessionContext } from "../realtime/mode.js";
import { reportFailure } from "./problems.js";

/** Thrown when the session has no language model to answer with. */
export class NoLanguageModel extends Error {
  constructor() {
    super("no language model is available for this session");
    this.name = "NoLanguageModel";
  }
}

const SPOKEN_STYLE =
  "Your replies are spoken aloud in a live voice conversation: answer in short, natural spoken sentences, " +
  "without markdown, lists, emojis or links.";
const DEFAULT_PROMPT = "You are a helpful, friendly assistant.";

/**
 * What the language model answers from: the context's prompt (dynamic variables already filled in),
 * the session's dynamic variables, the attached memory's content (read once, when first needed), and
 * the conversation so far as it was actually spoken (the avatar's turns truncated where interrupted).
 */
export class Conversation {
  private readonly history: ChatMessage[] = [];
  private memory: Promise<string> | undefined;

  constructor(
    private readonly ctx: SessionContext,
    private readonly providers: SessionProviders,
    private readonly memoryClient: Clients["memory"],
    /** Messages of the conversation kept for the model (the oldest are left out beyond it). */
    private readonly maxHistory = 40,
  ) {}

  addUser(text: string): void {
    this.add({ role: "user", content: text });
  }

  addAvatar(text: string): void {
    this.add({ role: "assistant", content: text });
  }

  /** Starts reading the attached memory now. */
  prefetch(): void {
    void this.memoryContent();
  }

  /** The answer to the conversation so far, as the model writes it. */
  async *answer(signal: AbortSignal): AsyncGenerator<string> {
    const chosen = await this.providers.languageModel();
    if (!chosen) throw new NoLanguageModel();
    const system = await this.systemPrompt();
    signal.throwIfAborted();
    const messages: ChatMessage[] = [{ role: "system", content: system }, ...this.history];
    yield* chosen.model.stream({ model: chosen.modelName, messages }, signal);
  }

  private add(message: ChatMessage): void {
    if (!message.content.trim()) return;
    this.history.push(message);
    if (this.history.length > this.maxHistory) this.history.splice(0, this.history.length - this.maxHistory);
  }

  private async systemPrompt(): Promise<string> {
    const { config } = this.ctx;
    const parts = [config.prompt.trim() || DEFAULT_PROMPT];
    const variables = plainVariables(config.dynamicVariables);
    if (variables) {
      const lines = Object.entries(variables).map(([name, value]) => `- ${name}: ${String(value)}`);
      parts.push(`Facts about this session:\n${lines.join("\n")}`);
    }
    const memory = await this.memoryContent();
    if (memory) parts.push(`What you remember from earlier conversations with this user:\n${memory}`);
    parts.push(SPOKEN_STYLE);
    if (config.language) parts.push(`Reply in the language with code "${config.language}".`);
    return parts.join("\n\n");
  }

  /** The attached memory's content, or "" (none attached, or unreadable: the client is warned once). */
  private memoryContent(): Promise<string> {
    const memoryId = this.ctx.config.memoryId;
    if (!memoryId) return Promise.resolve("");
    this.memory ??= this.memoryClient.getMemory({ spaceId: this.ctx.spaceId, memoryId }).then(
      (r) => r.memory?.memoryContent.trim() ?? "",
      (err: unknown) => {
        const failure = err instanceof ConnectError ? new ProviderError("memory", err.rawMessage) : err;
        reportFailure(this.ctx, "reading the session's memory", failure, { severity: "warning" });
        return "";
      },
    );
    return this.memory;
  }
}
