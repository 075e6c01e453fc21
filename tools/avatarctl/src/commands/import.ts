import path from "node:path";
import type { ServiceName } from "@avatar/runtime";
import { flag, stringOption, uuidOption } from "../args.js";
import { type Command, type CommandContext, defineCommand, jsonOption } from "../command.js";
import { type ImportKind, readImportEntries, toAvatars, toVoices, type Visibility } from "../import-file.js";
import { avatarView, voiceView } from "../views.js";

interface ImportInput {
  file: string;
  visibility: Visibility;
  json: boolean;
}

/** `pnpm avatarctl` runs in the workspace root; INIT_CWD is where the operator typed the command. */
function resolveFile(file: string, env: Record<string, string | undefined>): string {
  return path.resolve(env.INIT_CWD || process.cwd(), file);
}

/** With --space the space must exist, so private entries never land on a mistyped id. */
async function checkSpace(input: ImportInput, { clients }: CommandContext): Promise<void> {
  if ("spaceId" in input.visibility) await clients.tokens.getSpace({ spaceId: input.visibility.spaceId });
}

function importCommand(kind: ImportKind, summary: string): Command {
  return defineCommand<ImportInput>({
    group: "import",
    name: kind,
    summary,
    positionals: ["FILE"],
    options: {
      space: {
        type: "string",
        value: "ID",
        description: "make them private to this space (default: public)",
      },
      ...jsonOption,
    },
    details: [
      `FILE is JSON: an array of ${kind}, or an object with a "${kind}" array; entries in snake_case as in`,
      "services/catalog/seed/catalog.json. Entries with an existing id replace it. All or nothing.",
    ],
    parse: (values, [file = ""]) => ({
      file,
      visibility:
        stringOption(values, "space") === undefined
          ? { public: true }
          : { spaceId: uuidOption(values, "space") },
      json: flag(values, "json"),
    }),
    services: (input): ServiceName[] => ("spaceId" in input.visibility ? ["catalog", "tokens"] : ["catalog"]),
    async run(input, ctx) {
      const entries = readImportEntries(resolveFile(input.file, ctx.env), kind, input.file);
      const where = "spaceId" in input.visibility ? `space ${input.visibility.spaceId}` : "public";
      if (kind === "avatars") {
        const avatars = toAvatars(entries, input.file, input.visibility);
        await checkSpace(input, ctx);
        const saved = (await ctx.clients.catalog.importAvatars({ avatars })).avatars.map(avatarView);
        if (input.json) return ctx.out.json(saved);
        ctx.out.line(`imported ${saved.length} avatars (${where})`);
        ctx.out.table(
          ["id", "name", "status"],
          saved.map((a) => [a.id, a.name, a.status]),
        );
      } else {
        const voices = toVoices(entries, input.file, input.visibility);
        await checkSpace(input, ctx);
        const saved = (await ctx.clients.catalog.importVoices({ voices })).voices.map(voiceView);
        if (input.json) return ctx.out.json(saved);
        ctx.out.line(`imported ${saved.length} voices (${where})`);
        ctx.out.table(
          ["id", "name", "language"],
          saved.map((v) => [v.id, v.name, v.language]),
        );
      }
    },
  });
}

export const importCommands: Command[] = [
  importCommand("avatars", "Create or replace avatars from a JSON file"),
  importCommand("voices", "Create or replace voices from a JSON file"),
];
