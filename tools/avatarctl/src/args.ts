import { parseArgs } from "node:util";
import type { Tier } from "@avatar/contracts/tokens";
import { isUuid, type ServiceName, type ServiceUrls } from "@avatar/runtime";
import { UsageError } from "./errors.js";
import { tierFromName, tierNames } from "./tiers.js";

export interface OptionSpec {
  type: "string" | "boolean";
  /** Placeholder of the value in help, e.g. NAME. */
  value?: string;
  required?: boolean;
  description: string;
}

export type OptionSpecs = Record<string, OptionSpec>;
export type OptionValues = Record<string, string | boolean | undefined>;

/** The flag and environment variable that give each service's URL. */
export const serviceUrlSources: Record<"tokens" | "catalog" | "sessions", { flag: string; env: string }> = {
  tokens: { flag: "tokens-url", env: "TOKENS_URL" },
  catalog: { flag: "catalog-url", env: "CATALOG_URL" },
  sessions: { flag: "sessions-url", env: "SESSIONS_URL" },
};

/** Accepted by every command, before or after the command words. */
export const globalOptions: OptionSpecs = {
  "tokens-url": { type: "string", value: "URL", description: "tokens service (default: $TOKENS_URL)" },
  "catalog-url": { type: "string", value: "URL", description: "catalog service (default: $CATALOG_URL)" },
  "sessions-url": { type: "string", value: "URL", description: "sessions service (default: $SESSIONS_URL)" },
  "nats-url": { type: "string", value: "URL", description: "the deployment's NATS (default: $NATS_URL)" },
  "nats-namespace": {
    type: "string",
    value: "NS",
    description: "the deployment's bus namespace (default: $NATS_NAMESPACE)",
  },
  help: { type: "boolean", description: "show help" },
};

/** Where the bus is: --nats-url or $NATS_URL, and --nats-namespace or $NATS_NAMESPACE. */
export function resolveBus(
  values: OptionValues,
  env: Record<string, string | undefined>,
): { natsUrl: string; namespace: string | undefined } {
  const natsUrl = stringOption(values, "nats-url") ?? env.NATS_URL;
  if (!natsUrl) throw new UsageError("no NATS server: pass --nats-url or set NATS_URL");
  const namespace = stringOption(values, "nats-namespace") ?? env.NATS_NAMESPACE;
  return { natsUrl, namespace: namespace || undefined };
}

/** A whole number from 1 to `max`. */
export function parseCount(value: string, name: string, max = 1_000_000): number {
  const n = /^\d+$/.test(value) ? Number(value) : Number.NaN;
  if (!Number.isSafeInteger(n) || n < 1 || n > max) {
    throw new UsageError(`--${name} must be a whole number from 1 to ${max} (got "${value}")`);
  }
  return n;
}

export function wantsHelp(argv: string[]): boolean {
  return argv.includes("--help") || argv.includes("-h");
}

/**
 * The command words (e.g. ["space", "create"]): the arguments that are not options, skipping the values
 * of the global options so `--tokens-url URL space list` works.
 */
export function commandWords(argv: string[], count: number): string[] {
  const words: string[] = [];
  for (let i = 0; i < argv.length && words.length < count; i++) {
    const arg = argv[i] ?? "";
    if (arg === "--") break;
    if (arg.startsWith("-")) {
      const name = arg.replace(/^--?/, "");
      if (globalOptions[name]?.type === "string") i++;
      continue;
    }
    words.push(arg);
  }
  return words;
}

/** Strict parse of one command's arguments plus the global options; errors become one-line UsageErrors. */
export function parseCommandArgs(
  argv: string[],
  options: OptionSpecs,
): { values: OptionValues; positionals: string[] } {
  const all = { ...globalOptions, ...options };
  const config = Object.fromEntries(
    Object.entries(all).map(([name, spec]) => [
      name,
      name === "help" ? { type: spec.type, short: "h" } : { type: spec.type },
    ]),
  );
  try {
    const { values, positionals } = parseArgs({
      args: negativeNumbersAsValues(argv, all),
      options: config,
      strict: true,
      allowPositionals: true,
    });
    for (const [name, spec] of Object.entries(options)) {
      if (spec.required && values[name] === undefined) throw new UsageError(`missing --${name}`);
    }
    return { values: values as OptionValues, positionals };
  } catch (err) {
    throw err instanceof UsageError ? err : new UsageError(parseErrorMessage(err));
  }
}

/**
 * node:util reads `--credits -5` as a missing value; join such a pair into `--credits=-5` so the value's
 * own check can say what is wrong with it.
 */
function negativeNumbersAsValues(argv: string[], options: OptionSpecs): string[] {
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] ?? "";
    const next = argv[i + 1];
    const name = arg.startsWith("--") ? arg.slice(2) : undefined;
    if (name && options[name]?.type === "string" && next !== undefined && /^-\d/.test(next)) {
      out.push(`${arg}=${next}`);
      i++;
    } else {
      out.push(arg);
    }
  }
  return out;
}

/** node:util's messages run over several lines and talk about positionals; say it in one line. */
function parseErrorMessage(err: unknown): string {
  const message = err instanceof Error ? err.message : String(err);
  const code = (err as { code?: string }).code;
  const flag = /'(-{1,2}[^' ]+)/.exec(message)?.[1] ?? "option";
  if (code === "ERR_PARSE_ARGS_UNKNOWN_OPTION") return `unknown option ${flag}`;
  if (message.includes("argument missing")) return `${flag} needs a value`;
  if (message.includes("ambiguous"))
    return `${flag} needs a value (write ${flag}=-VALUE for one that starts with "-")`;
  if (message.includes("does not take an argument")) return `${flag} takes no value`;
  return message.split("\n")[0] ?? message;
}

export function stringOption(values: OptionValues, name: string): string | undefined {
  const value = values[name];
  return typeof value === "string" ? value : undefined;
}

export function requiredString(values: OptionValues, name: string): string {
  const value = stringOption(values, name);
  if (value === undefined) throw new UsageError(`missing --${name}`);
  if (value.trim() === "") throw new UsageError(`--${name} must not be empty`);
  return value;
}

export function flag(values: OptionValues, name: string): boolean {
  return values[name] === true;
}

export function uuidOption(values: OptionValues, name: string): string {
  const value = requiredString(values, name);
  if (!isUuid(value)) throw new UsageError(`--${name} must be a UUID (got "${value}")`);
  return value;
}

export function parseTier(value: string): Tier {
  const tier = tierFromName(value.toLowerCase());
  if (tier === undefined)
    throw new UsageError(`--tier must be one of ${tierNames.join(", ")} (got "${value}")`);
  return tier;
}

const INT32_MAX = 2_147_483_647;

/** Whole seconds; `allowZero` where 0 means "back to the tier's limit". */
export function parseSeconds(value: string, name: string, allowZero = false): number {
  const seconds = /^\d+$/.test(value) ? Number(value) : Number.NaN;
  if (!Number.isSafeInteger(seconds) || seconds > INT32_MAX || (seconds === 0 && !allowZero)) {
    const what = allowZero
      ? "a whole number of seconds (0 = the tier's limit)"
      : "a positive whole number of seconds";
    throw new UsageError(`--${name} must be ${what} (got "${value}")`);
  }
  return seconds;
}

/** Credits travel as decimal strings ("118.5"); an amount must be positive. */
export function parseCreditAmount(value: string, name: string): string {
  const trimmed = value.trim();
  if (!/^\d+(\.\d+)?$/.test(trimmed) || !/[1-9]/.test(trimmed)) {
    throw new UsageError(`--${name} must be a positive decimal number such as 100 or 12.5 (got "${value}")`);
  }
  return trimmed;
}

/**
 * Each needed service's URL from its flag, else its environment variable, else `found` (the running
 * suite's discovery file); missing or malformed ones stop here.
 */
export function resolveServiceUrls(
  needed: readonly ServiceName[],
  values: OptionValues,
  env: Record<string, string | undefined>,
  found: ServiceUrls = {},
): ServiceUrls {
  const urls: ServiceUrls = {};
  for (const service of new Set(needed)) {
    const source = serviceUrlSources[service as keyof typeof serviceUrlSources];
    if (!source) throw new Error(`avatarctl does not talk to the ${service} service`);
    const raw = stringOption(values, source.flag) ?? env[source.env] ?? found[service];
    if (!raw) {
      throw new UsageError(
        `no URL for the ${service} service: pass --${source.flag}, set ${source.env}, or start the suite here (pnpm start)`,
      );
    }
    let url: URL | undefined;
    try {
      url = new URL(raw);
    } catch {
      url = undefined;
    }
    if (!url || (url.protocol !== "http:" && url.protocol !== "https:")) {
      throw new UsageError(`the ${service} service URL must be an http(s) URL (got "${raw}")`);
    }
    urls[service] = raw.replace(/\/+$/, "");
  }
  return urls;
}
