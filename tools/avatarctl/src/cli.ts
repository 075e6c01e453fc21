import type { Bus } from "@avatar/bus";
import { type Clients, connectBus, silentLogger } from "@avatar/runtime";
import { commandWords, type OptionValues, parseCommandArgs, resolveBus, wantsHelp } from "./args.js";
import type { Command, Io } from "./command.js";
import { creditsCommands } from "./commands/credits.js";
import { deadLetterCommands } from "./commands/deadletter.js";
import { identityCommands } from "./commands/identity.js";
import { importCommands } from "./commands/import.js";
import { keyCommands } from "./commands/key.js";
import { signingKeyCommands } from "./commands/signing-key.js";
import { spaceCommands } from "./commands/space.js";
import { webhookCommands } from "./commands/webhook.js";
import { connect } from "./connection.js";
import { reportError, UsageError } from "./errors.js";
import { commandHelp, groupHelp, mainHelp } from "./help.js";
import { createOutput } from "./output.js";

export type { Io } from "./command.js";

export const commands: Command[] = [
  ...spaceCommands,
  ...keyCommands,
  ...signingKeyCommands,
  ...creditsCommands,
  ...importCommands,
  ...identityCommands,
  ...webhookCommands,
  ...deadLetterCommands,
];

const groups = [...new Set(commands.map((c) => c.group))];

/** Runs one command line and answers its exit code: 0 done, 1 a service failed, 2 a usage error. */
export async function run(argv: string[], io: Io): Promise<number> {
  try {
    return await dispatch(argv, io);
  } catch (err) {
    const report = reportError(err);
    for (const line of report.lines) io.stderr(`avatarctl: ${line}\n`);
    return report.exitCode;
  }
}

async function dispatch(argv: string[], io: Io): Promise<number> {
  const [group, action] = commandWords(argv, 2);
  if (group === undefined) {
    if (wantsHelp(argv)) return printed(io, mainHelp(commands));
    throw new UsageError(`missing command (commands: ${groups.join(", ")}; see "avatarctl help")`);
  }
  if (group === "help") return printed(io, helpFor(commandWords(argv, 3).slice(1)));

  const inGroup = commandsOf(group);
  if (action === undefined || action === "help") {
    if (action === "help" || wantsHelp(argv)) return printed(io, groupHelp(group, inGroup));
    throw new UsageError(`missing command after "${group}": one of ${inGroup.map((c) => c.name).join(", ")}`);
  }
  const command = commandOf(group, action);
  if (wantsHelp(argv)) return printed(io, commandHelp(command));

  let prepared: ReturnType<Command["prepare"]>;
  let clients: Clients;
  let values: OptionValues;
  try {
    const parsed = parseCommandArgs(argv, command.options);
    values = parsed.values;
    prepared = command.prepare(values, checkPositionals(command, parsed.positionals.slice(2)));
    clients = prepared.services.length > 0 ? connect(prepared.services, values, io.env) : offline;
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    throw new UsageError(`${err.message} (see "avatarctl ${group} ${action} --help")`);
  }
  const bus = lazyBus(io, values);
  try {
    await prepared.run({ clients, out: createOutput(io), env: io.env, bus: bus.get });
  } finally {
    await bus.close();
  }
  return 0;
}

/** The bus, connected when a command first asks for it, and closed after the command (unless given). */
function lazyBus(io: Io, values: OptionValues) {
  let connected: Promise<Bus> | undefined;
  return {
    get: (): Promise<Bus> => {
      if (io.bus) return Promise.resolve(io.bus);
      const { natsUrl, namespace } = resolveBus(values, io.env);
      connected ??= connectBus({ natsUrl, namespace }, "avatarctl", silentLogger);
      return connected;
    },
    close: async () => {
      if (connected) await (await connected.catch(() => undefined))?.close();
    },
  };
}

/** The clients of a command that calls no service (it declared none). */
const offline = new Proxy({} as Clients, {
  get(_target, prop) {
    throw new Error(`this command declared no services but used ${String(prop)}`);
  },
});

function printed(io: Io, text: string): number {
  io.stdout(text);
  return 0;
}

function commandsOf(group: string): Command[] {
  const found = commands.filter((c) => c.group === group);
  if (found.length === 0) {
    throw new UsageError(`unknown command "${group}" (commands: ${groups.join(", ")}; see "avatarctl help")`);
  }
  return found;
}

function commandOf(group: string, action: string): Command {
  const inGroup = commandsOf(group);
  const command = inGroup.find((c) => c.name === action);
  if (!command) {
    throw new UsageError(
      `unknown command "${group} ${action}" (${group} commands: ${inGroup.map((c) => c.name).join(", ")})`,
    );
  }
  return command;
}

function helpFor(words: string[]): string {
  const [group, action] = words;
  if (group === undefined) return mainHelp(commands);
  if (action === undefined) return groupHelp(group, commandsOf(group));
  return commandHelp(commandOf(group, action));
}

function checkPositionals(command: Command, given: string[]): string[] {
  const missing = command.positionals[given.length];
  if (missing) throw new UsageError(`missing ${missing}`);
  const extra = given[command.positionals.length];
  if (extra !== undefined) throw new UsageError(`unexpected argument "${extra}"`);
  return given;
}
