import { globalOptions, type OptionSpecs, serviceUrlSources } from "./args.js";
import type { Command } from "./command.js";

const PROGRAM = "avatarctl";

function optionUsage(name: string, spec: OptionSpecs[string]): string {
  const text = spec.type === "string" ? `--${name} ${spec.value ?? "VALUE"}` : `--${name}`;
  return spec.required ? text : `[${text}]`;
}

function optionLines(options: OptionSpecs): string[] {
  const rows = Object.entries(options).map(([name, spec]) => {
    const left =
      name === "help"
        ? "-h, --help"
        : spec.type === "string"
          ? `--${name} ${spec.value ?? "VALUE"}`
          : `--${name}`;
    return [left, spec.required ? `${spec.description} (required)` : spec.description] as const;
  });
  const width = Math.max(...rows.map(([left]) => left.length));
  return rows.map(([left, right]) => `  ${left.padEnd(width)}  ${right}`);
}

function commandList(commands: Command[]): string[] {
  const width = Math.max(...commands.map((c) => `${c.group} ${c.name}`.length));
  return commands.map((c) => `  ${`${c.group} ${c.name}`.padEnd(width)}  ${c.summary}`);
}

export function usageLine(command: Command): string {
  const parts = [
    `${PROGRAM} ${command.group} ${command.name}`,
    ...command.positionals,
    ...Object.entries(command.options).map(([name, spec]) => optionUsage(name, spec)),
  ];
  return parts.join(" ");
}

export function mainHelp(commands: Command[]): string {
  const urls = Object.entries(serviceUrlSources).map(
    ([service, s]) => `  --${s.flag} URL  or  ${s.env}   (${service})`,
  );
  return [
    `${PROGRAM}: operator tool for the avatar services (spaces, API keys, credits, catalog imports).`,
    "It talks to the internal services over Connect, never to the public API.",
    "",
    `Usage: pnpm ${PROGRAM} <command> [options]`,
    "",
    "Commands:",
    ...commandList(commands),
    "",
    "Service URLs (the flag wins over the environment, which wins over a suite started with",
    "`pnpm start` in this folder: its DATA_DIR/suite.json):",
    ...urls,
    "",
    "Service identity: calls are signed as avatarctl with SERVICE_IDENTITY_KEY (the avatarctl key of",
    "the avatar-service-identity Secret), else with the key of the suite running here.",
    "",
    `Run "${PROGRAM} <command> --help" (or "${PROGRAM} help <command>") for a command's options.`,
    "Exit codes: 0 done, 1 a service refused or failed, 2 bad command line or input file.",
    "",
  ].join("\n");
}

export function groupHelp(group: string, commands: Command[]): string {
  return [
    `Usage: ${PROGRAM} ${group} <command> [options]`,
    "",
    "Commands:",
    ...commandList(commands),
    "",
  ].join("\n");
}

export function commandHelp(command: Command): string {
  return [
    `Usage: ${usageLine(command)}`,
    "",
    command.summary,
    ...(command.details ? ["", ...command.details] : []),
    "",
    "Options:",
    ...optionLines(command.options),
    "",
    "Global options:",
    ...optionLines(globalOptions),
    "",
  ].join("\n");
}
