import { AsyncQueue, speechOf } from "@avatar/providers";
import type { SessionProviders } from "../providers/session-providers.js";
import type { ServerEventInput, SessionContext } from "../realtime/mode.js";
import { type Conversation, NoLanguageModel } from "./conversation.js";
import { Playout, type PlayoutClock } from "./playout.js";
import { isAbort, reportFailure } from "./problems.js";
import { SentenceBuffer } from "./sentence-buffer.js";
import { type TurnStart, turnStart, writeTurn } from "./transcript.js";

/** What the avatar is asked to do: speak a text as given, or answer through the language model. */
export type TurnRequest = (
  | { kind: "speak"; text: string; sourceEventId: string | null }
  /** `userText`: a text the client asked the avatar to answer (avatar.say); else the conversation so far. */
  | { kind: "answer"; userText?: string; sourceEventId: string | null }
) & { origin?: TurnOrigin };

/** Where a turn came from, for its latency (realtime/turn-metrics.ts). */
export interface TurnOrigin {
  /** `user_speech`, `opening_text`, or the client event's type. */
  trigger: string;
  /** The turn's reference point (epoch ms): the end of the user's speech, or when the request arrived. */
  at: number;
  /** When the user's utterance was recognized (answers to speech). */
  transcribedAt?: number;
}

export interface TurnDeps {
  ctx: SessionContext;
  providers: SessionProviders;
  conversation: Conversation;
  clock: PlayoutClock;
  /** The avatar's audio started or stopped playing. */
  onTalking(talking: boolean): void;
  /** False once the session stops: the turn then sends nothing (its spoken part is still written). */
  mayEmit(): boolean;
}

interface Sentence {
  text: string;
  /** When its audio will have played. */
  endsAt: number;
}

/**
 * One avatar turn. The text (given, or streamed from the model as `avatar.transcription.chunk`) is cut
 * into sentences, each synthesized while the previous plays; `avatar.speak_started` when the first
 * audio plays, `avatar.speak_ended` when the last has played out in real time (or at once when
 * interrupted), and `avatar.transcription` with what was actually spoken: only sentences whose audio
 * played completely. That text is what the transcript and the conversation keep.
 */
export async function runTurn(d: TurnDeps, request: TurnRequest, signal: AbortSignal): Promise<void> {
  const { ctx } = d;
  const playout = new Playout(d.clock);
  const emit = (type: string, fields: Omit<ServerEventInput, "type"> = {}) => {
    if (d.mayEmit()) ctx.send({ type, sourceEventId: request.sourceEventId, ...fields });
  };
  const metrics = ctx.turnMetrics.begin({
    trigger: request.origin?.trigger ?? (request.kind === "speak" ? "avatar.repeat" : "avatar.say"),
    startedAt: request.origin?.at ?? ctx.now(),
    sourceEventId: request.sourceEventId,
  });
  if (request.origin?.transcribedAt !== undefined) {
    metrics.mark("final_transcript", request.origin.transcribedAt);
  }
  if (request.kind === "answer" && request.userText !== undefined) {
    writeTurn(ctx, "user", request.userText, turnStart(ctx));
    d.conversation.addUser(request.userText);
  }

  // The turn's own signal also stops the text when speech fails.
  const controller = new AbortController();
  const stopText = () => controller.abort(signal.reason);
  signal.addEventListener("abort", stopText, { once: true });
  // An interrupt, whenever it comes, silences the avatar's media in the same tick as its playout stops.
  const silence = () => {
    if (playout.started) ctx.avatar.interrupt();
  };
  signal.addEventListener("abort", silence, { once: true });

  const sentences: Sentence[] = [];
  let start: TurnStart | undefined;
  let wroteText = false;
  let failure: { what: string; err: unknown } | undefined;

  const queue = new AsyncQueue<string>();
  const writing = (async () => {
    const buffer = new SentenceBuffer();
    try {
      for await (const piece of textOf(d, request, controller.signal)) {
        if (request.kind === "answer") metrics.mark("first_llm_token");
        emit("avatar.transcription.chunk", { text: piece });
        wroteText = true;
        for (const sentence of buffer.push(piece)) queue.push(sentence);
      }
      for (const sentence of buffer.flush()) queue.push(sentence);
      queue.end();
    } catch (err) {
      failure ??= { what: "language model", err };
      queue.end();
    }
  })();

  try {
    const voice = await d.providers.synthesizer();
    for await (const text of queue) {
      const chunks = speechOf(
        voice.synthesizer,
        {
          text,
          voiceId: voice.voiceId,
          settings: voice.settings,
          language: ctx.config.language || undefined,
        },
        signal,
      );
      for await (const { pcm, phonemes } of chunks) {
        if (!start) {
          start = turnStart(ctx);
          metrics.mark("first_audio");
          emit("avatar.speak_started");
          d.onTalking(true);
        }
        playout.push(pcm.length);
        ctx.avatar.speak(pcm, phonemes);
      }
      signal.throwIfAborted();
      const endsAt = playout.endsAt;
      if (endsAt !== undefined && sentences.at(-1)?.endsAt !== endsAt) sentences.push({ text, endsAt });
    }
  } catch (err) {
    if (!isAbort(err, signal)) failure ??= { what: "speech synthesis", err };
    controller.abort();
  }
  await writing;
  signal.removeEventListener("abort", stopText);
  if (playout.started && !signal.aborted) ctx.avatar.endUtterance();

  // Audio already queued plays out even when the rest of the turn failed.
  await playout.drained(signal).catch(() => {});
  signal.removeEventListener("abort", silence);
  const interrupted = signal.aborted;
  const now = d.clock.now();
  const spoken = sentences
    .filter((s) => s.endsAt <= now)
    .map((s) => s.text)
    .join(" ");

  if (failure && !isAbort(failure.err, signal)) report(d, failure, request, playout.started);
  if (wroteText || playout.started) emit("avatar.transcription", { text: spoken, interrupted });
  if (playout.started) {
    emit("avatar.speak_ended", { interrupted });
    d.onTalking(false);
  }
  if (spoken && start) {
    writeTurn(ctx, "avatar", spoken, start);
    d.conversation.addAvatar(spoken);
  }
  if (d.mayEmit()) metrics.finish({ interrupted });
}

async function* textOf(d: TurnDeps, request: TurnRequest, signal: AbortSignal): AsyncGenerator<string> {
  if (request.kind === "speak") yield request.text;
  else yield* d.conversation.answer(signal);
}

function report(
  d: TurnDeps,
  failure: { what: string; err: unknown },
  request: TurnRequest,
  somethingPlayed: boolean,
): void {
  if (!d.mayEmit()) return;
  const sourceEventId = request.sourceEventId;
  if (failure.err instanceof NoLanguageModel) {
    d.ctx.sendError("llm_unavailable", failure.err.message, sourceEventId);
    return;
  }
  reportFailure(d.ctx, failure.what, failure.err, {
    severity: somethingPlayed ? "warning" : "error",
    sourceEventId,
  });
}
