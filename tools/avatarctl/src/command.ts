import type { Bus } from "@avatar/bus";
import type { Clients, ServiceName } from "@avatar/runtime";
import { flag, type OptionSpecs, type OptionValues } from "./args.js";
import type { Output } from "./output.js";

/** Where the CLI reads and writes; main.ts passes the process's, tests their own. */
export interface Io {
  stdout(text: string): void;
  stderr(text: string): void;
  env: Record<string, string | undefined>;
  /** The bus to use instead of connecting to NATS_URL (tests). */
  bus?: Bus;
}

export interface CommandContext {
  clients: Clients;
  out: Output;
  env: Record<string, string | undefined>;
  /** The deployment's bus (NATS at --nats-url or $NATS_URL, in $NATS_NAMESPACE), connected on first use. */
  bus(): Promise<Bus>;
}

/** A command whose arguments were checked: what it will call and how. */
export interface PreparedCommand {
  services: ServiceName[];
  run(ctx: CommandContext): Promise<void>;
}

export interface Command {
  group: string;
  name: string;
  summary: string;
  /** Names of the positional arguments, all required (e.g. FILE). */
  positionals: string[];
  options: OptionSpecs;
  /** Extra help lines (what the command does beyond its options). */
  details?: string[];
  /** Validates the arguments (throws UsageError) before anything is called. */
  prepare(values: OptionValues, positionals: string[]): PreparedCommand;
}

export interface CommandDefinition<Input> {
  group: string;
  name: string;
  summary: string;
  positionals?: string[];
  options: OptionSpecs;
  details?: string[];
  /** Turns checked arguments into the command's typed input; throws UsageError. */
  parse(values: OptionValues, positionals: string[]): Input;
  /** The services this input needs, so a missing URL fails before anything changes. */
  services(input: Input): ServiceName[];
  run(input: Input, ctx: CommandContext): Promise<void>;
}

export function defineCommand<Input>(def: CommandDefinition<Input>): Command {
  return {
    group: def.group,
    name: def.name,
    summary: def.summary,
    positionals: def.positionals ?? [],
    options: def.options,
    ...(def.details ? { details: def.details } : {}),
    prepare(values, positionals) {
      const input = def.parse(values, positionals);
      return { services: def.services(input), run: (ctx) => def.run(input, ctx) };
    },
  };
}

export const jsonOption = {
  json: { type: "boolean", description: "print JSON on stdout" },
} as const satisfies OptionSpecs;

/** The options and parsing of a command whose only option is --json. */
export const jsonOnly = {
  options: { ...jsonOption },
  parse: (values: OptionValues) => ({ json: flag(values, "json") }),
};
