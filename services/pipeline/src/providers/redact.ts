import {
  type Conversation,
  type ConversationEvent,
  type ConversationOptions,
  type ConversationProvider,
  type LanguageModel,
  ProviderError,
  type RecognitionEvent,
  type RecognitionStream,
  type SpeechRecognizer,
  type SpeechSynthesizer,
} from "@avatar/providers";
import { scrubSecrets, scrubStream } from "@avatar/runtime";

/**
 * Wrappers that scrub key values out of everything a provider returns: every error it raises (so no key
 * reaches a client event or a log line even when a provider echoes it back; some take the key in the
 * URL; the cause is dropped for the same reason, it may hold the request) and every text it produces (a
 * model's answer, transcripts), which is shown to clients and stored in transcripts.
 */

export type Secrets = ReadonlySet<string>;

export const scrub = (text: string, secrets: Secrets): string => scrubSecrets(text, secrets);

export function scrubError(err: unknown, secrets: Secrets): unknown {
  if (err instanceof ProviderError)
    return new ProviderError(err.provider, scrub(err.message, secrets), err.kind);
  if (err instanceof Error && err.name !== "AbortError") {
    const copy = new Error(scrub(err.message, secrets));
    copy.name = err.name;
    return copy;
  }
  return err;
}

async function* scrubbing<T>(items: AsyncIterable<T>, secrets: Secrets): AsyncGenerator<T> {
  try {
    yield* items;
  } catch (err) {
    throw scrubError(err, secrets);
  }
}

export function redactSynthesizer(inner: SpeechSynthesizer, secrets: Secrets): SpeechSynthesizer {
  return {
    name: inner.name,
    synthesize: (request, signal) => scrubbing(inner.synthesize(request, signal), secrets),
  };
}

export function redactLanguageModel(inner: LanguageModel, secrets: Secrets): LanguageModel {
  return {
    name: inner.name,
    // A key split across two pieces of the answer is still caught (scrubStream holds a tail back).
    stream: (request, signal) => scrubStream(scrubbing(inner.stream(request, signal), secrets), secrets),
  };
}

export function redactRecognizer(inner: SpeechRecognizer, secrets: Secrets): SpeechRecognizer {
  return {
    name: inner.name,
    async open(options, signal): Promise<RecognitionStream> {
      let stream: RecognitionStream;
      try {
        stream = await inner.open(options, signal);
      } catch (err) {
        throw scrubError(err, secrets);
      }
      const events = mapEvents(stream.events, secrets, (e: RecognitionEvent) => {
        if (e.type === "error")
          return { type: "error" as const, error: scrubError(e.error, secrets) as ProviderError };
        if (e.type === "partial" || e.type === "final") return { ...e, text: scrub(e.text, secrets) };
        return e;
      });
      return {
        write: (pcm) => stream.write(pcm),
        end: () => stream.end(),
        close: () => stream.close(),
        events,
      };
    },
  };
}

export function redactConversationProvider(
  inner: ConversationProvider,
  secrets: Secrets,
): ConversationProvider {
  return {
    name: inner.name,
    async connect(options: ConversationOptions, signal?: AbortSignal): Promise<Conversation> {
      let conversation: Conversation;
      try {
        conversation = await inner.connect(options, signal);
      } catch (err) {
        throw scrubError(err, secrets);
      }
      const events = mapEvents(conversation.events, secrets, (e: ConversationEvent) => {
        if (e.type === "error")
          return { type: "error" as const, error: scrubError(e.error, secrets) as ProviderError };
        if (e.type === "user_transcript" || e.type === "agent_transcript") {
          return { ...e, text: scrub(e.text, secrets) };
        }
        return e;
      });
      const wrapped: Conversation = {
        sendAudio: (pcm) => conversation.sendAudio(pcm),
        interrupt: () => conversation.interrupt(),
        close: () => conversation.close(),
        events,
      };
      if (conversation.sendText) wrapped.sendText = (text) => conversation.sendText?.(text);
      if (conversation.sendRaw) wrapped.sendRaw = (type, data) => conversation.sendRaw?.(type, data);
      return wrapped;
    },
  };
}

function mapEvents<T>(events: AsyncIterable<T>, secrets: Secrets, map: (event: T) => T): AsyncIterable<T> {
  return {
    async *[Symbol.asyncIterator]() {
      for await (const event of scrubbing(events, secrets)) yield map(event);
    },
  };
}
