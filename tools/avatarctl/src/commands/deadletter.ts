import { type DeadLetter, listDeadLetters, replayDeadLetter } from "@avatar/bus";
import type { ServiceName } from "@avatar/runtime";
import { flag, parseCount, requiredString, stringOption } from "../args.js";
import { type Command, defineCommand, jsonOption } from "../command.js";
import { UsageError } from "../errors.js";

const consumerOption = {
  consumer: { type: "string", value: "NAME", description: "only this consumer's (e.g. memory)" },
} as const;

const DETAILS = [
  "A durable event whose handler kept failing (retried with growing delays for about 2.5 minutes) is",
  "kept as a dead letter for a week instead of being dropped. Talks to the bus: --nats-url or",
  "$NATS_URL, and --nats-namespace or $NATS_NAMESPACE as the services run with.",
];

function view(letter: DeadLetter) {
  return {
    seq: letter.seq,
    consumer: letter.consumer,
    subject: letter.subject,
    deliveries: letter.deliveries,
    dead_at: letter.deadAt.toISOString(),
    error: letter.error,
    bytes: letter.data.length,
  };
}

const list = defineCommand({
  group: "deadletter",
  name: "list",
  summary: "List the events consumers gave up on",
  options: {
    ...consumerOption,
    limit: { type: "string", value: "N", description: "at most N (default 100)" },
    ...jsonOption,
  },
  details: DETAILS,
  parse: (values) => ({
    consumer: stringOption(values, "consumer") === undefined ? undefined : requiredString(values, "consumer"),
    limit:
      stringOption(values, "limit") === undefined
        ? 100
        : parseCount(requiredString(values, "limit"), "limit"),
    json: flag(values, "json"),
  }),
  services: (): ServiceName[] => [],
  async run(input, { bus, out }) {
    const letters = await listDeadLetters(await bus(), {
      limit: input.limit,
      ...(input.consumer ? { consumer: input.consumer } : {}),
    });
    if (input.json) return out.json(letters.map(view));
    out.table(
      ["seq", "consumer", "subject", "deliveries", "dead_at", "error"],
      letters.map((l) => {
        const v = view(l);
        return [v.seq, v.consumer, v.subject, v.deliveries, v.dead_at, v.error];
      }),
    );
  },
});

const replay = defineCommand({
  group: "deadletter",
  name: "replay",
  summary: "Publish dead letters again (once their cause is fixed) and remove them",
  options: {
    seq: { type: "string", value: "N", description: "the dead letter to replay (from list)" },
    all: { type: "boolean", description: "replay every dead letter (of --consumer, if given)" },
    ...consumerOption,
    ...jsonOption,
  },
  details: [
    "The event goes again to every consumer of its subject (their handlers are idempotent), under a",
    "fresh message id so the stream's de-duplication does not discard it.",
  ],
  parse(values) {
    const seq = stringOption(values, "seq");
    const all = flag(values, "all");
    if ((seq === undefined) === !all) throw new UsageError("pass exactly one of --seq N and --all");
    return {
      seq: seq === undefined ? undefined : parseCount(seq, "seq", Number.MAX_SAFE_INTEGER),
      consumer:
        stringOption(values, "consumer") === undefined ? undefined : requiredString(values, "consumer"),
      json: flag(values, "json"),
    };
  },
  services: (): ServiceName[] => [],
  async run(input, { bus, out }) {
    const b = await bus();
    const seqs =
      input.seq !== undefined
        ? [input.seq]
        : (await listDeadLetters(b, input.consumer ? { consumer: input.consumer } : {})).map((l) => l.seq);
    const replayed: number[] = [];
    const missing: number[] = [];
    for (const seq of seqs) ((await replayDeadLetter(b, seq)) ? replayed : missing).push(seq);
    if (input.json) return out.json({ replayed, missing });
    out.line(
      `replayed ${replayed.length} dead letter(s)${replayed.length ? `: ${replayed.join(", ")}` : ""}`,
    );
    if (missing.length > 0) out.note(`no dead letter at: ${missing.join(", ")}`);
  },
});

export const deadLetterCommands: Command[] = [list, replay];
