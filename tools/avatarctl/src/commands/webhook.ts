import { readFileSync } from "node:fs";
import type { ServiceName } from "@avatar/runtime";
import { verify } from "@avatar/webhooks";
import { requiredString, stringOption } from "../args.js";
import { type Command, defineCommand } from "../command.js";
import { UsageError } from "../errors.js";

/**
 * `avatarctl webhook verify`: checks a received webhook as a customer's receiver must (Standard
 * Webhooks: HMAC-SHA256 over "<webhook-id>.<webhook-timestamp>.<body>" with the endpoint's secret, and a
 * timestamp within the tolerance). Talks to no service.
 */
const verifyCommand = defineCommand({
  group: "webhook",
  name: "verify",
  summary: "Verify a received webhook's signature (as a receiver does)",
  options: {
    secret: {
      type: "string",
      value: "whsec_...",
      required: true,
      description: "the endpoint's signing secret",
    },
    id: { type: "string", value: "ID", required: true, description: "the webhook-id header" },
    timestamp: {
      type: "string",
      value: "SECONDS",
      required: true,
      description: "the webhook-timestamp header",
    },
    signature: { type: "string", value: "SIG", required: true, description: "the webhook-signature header" },
    "body-file": {
      type: "string",
      value: "FILE",
      required: true,
      description: "the exact request body, byte for byte (- for stdin)",
    },
    tolerance: {
      type: "string",
      value: "SECONDS",
      description: "how far the timestamp may be from now (default 300)",
    },
  },
  details: ["Exits 0 and prints `valid` when the signature matches; exits 1 naming the problem otherwise."],
  parse(values) {
    const tolerance = stringOption(values, "tolerance");
    if (tolerance !== undefined && !/^\d+$/.test(tolerance)) {
      throw new UsageError("--tolerance must be a whole number of seconds");
    }
    return {
      secret: requiredString(values, "secret"),
      headers: {
        id: requiredString(values, "id"),
        timestamp: requiredString(values, "timestamp"),
        signature: requiredString(values, "signature"),
      },
      bodyFile: requiredString(values, "body-file"),
      toleranceSeconds: tolerance === undefined ? 300 : Number(tolerance),
    };
  },
  services: (): ServiceName[] => [],
  async run(input, { out }) {
    const body = readFileSync(input.bodyFile === "-" ? 0 : input.bodyFile, "utf8");
    const result = verify(input.secret, input.headers, body, {
      nowSeconds: Math.floor(Date.now() / 1000),
      toleranceSeconds: input.toleranceSeconds,
    });
    if (!result.ok) throw new Error(`invalid webhook: ${result.problem}`);
    out.line("valid");
  },
});

export const webhookCommands: Command[] = [verifyCommand];
