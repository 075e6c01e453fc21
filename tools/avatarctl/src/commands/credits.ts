import { randomUUID } from "node:crypto";
import type { ServiceName } from "@avatar/runtime";
import { flag, parseCreditAmount, requiredString, stringOption, uuidOption } from "../args.js";
import { type Command, defineCommand, jsonOption } from "../command.js";
import { FailedWithHint } from "../errors.js";

const grant = defineCommand({
  group: "credits",
  name: "grant",
  summary: "Grant credits to a space",
  options: {
    space: { type: "string", value: "ID", required: true, description: "space id" },
    amount: { type: "string", value: "AMOUNT", required: true, description: "credits to add (decimal, > 0)" },
    note: { type: "string", value: "TEXT", description: "note stored with the ledger entry" },
    "idempotency-key": {
      type: "string",
      value: "K",
      description: "makes a retried grant count once (default: a fresh one, printed if the grant fails)",
    },
    ...jsonOption,
  },
  parse(values) {
    const key = stringOption(values, "idempotency-key");
    return {
      spaceId: uuidOption(values, "space"),
      amount: parseCreditAmount(requiredString(values, "amount"), "amount"),
      note: stringOption(values, "note") ?? "",
      idempotencyKey: key === undefined ? undefined : requiredString(values, "idempotency-key"),
      json: flag(values, "json"),
    };
  },
  services: (): ServiceName[] => ["tokens", "sessions"],
  async run(input, { clients, out }) {
    // The sessions service keeps balances by space id; check the space exists so a typo grants nothing.
    await clients.tokens.getSpace({ spaceId: input.spaceId });
    const idempotencyKey = input.idempotencyKey ?? `avatarctl:${randomUUID()}`;
    let creditsLeft: string;
    try {
      ({ creditsLeft } = await clients.sessions.grantCredits({
        spaceId: input.spaceId,
        amount: input.amount,
        note: input.note,
        idempotencyKey,
      }));
    } catch (err) {
      if (input.idempotencyKey !== undefined) throw err;
      throw new FailedWithHint(
        err,
        `if the grant may have gone through, retry with --idempotency-key ${idempotencyKey} so it counts once`,
      );
    }
    if (input.json) return out.json({ space_id: input.spaceId, credits_left: creditsLeft });
    out.line(`granted ${input.amount} credits; credits left: ${creditsLeft}`);
  },
});

const show = defineCommand({
  group: "credits",
  name: "show",
  summary: "Show a space's credit balance",
  options: {
    space: { type: "string", value: "ID", required: true, description: "space id" },
    ...jsonOption,
  },
  parse: (values) => ({ spaceId: uuidOption(values, "space"), json: flag(values, "json") }),
  services: (): ServiceName[] => ["sessions"],
  async run(input, { clients, out }) {
    const { creditsLeft } = await clients.sessions.getCredits({ spaceId: input.spaceId });
    if (input.json) return out.json({ space_id: input.spaceId, credits_left: creditsLeft });
    out.line(`credits left: ${creditsLeft}`);
  },
});

export const creditsCommands: Command[] = [grant, show];
