import { readFileSync } from "node:fs";
import { type AvatarSchema, AvatarStatus, type VoiceSchema } from "@avatar/contracts/catalog";
import { isUuid } from "@avatar/runtime";
import type { MessageInitShape } from "@bufbuild/protobuf";
import { UsageError } from "./errors.js";

/**
 * Import files: JSON, either an array of entries or an object with an "avatars" / "voices" array, entries
 * in the catalog file's snake_case shape (services/catalog/seed/catalog.json). Every entry is checked
 * before anything is sent, so a bad file imports nothing.
 */

export type ImportKind = "avatars" | "voices";
export type AvatarInit = MessageInitShape<typeof AvatarSchema>;
export type VoiceInit = MessageInitShape<typeof VoiceSchema>;

/** Where the entries sit: `--space` makes them the space's own, otherwise they are public. */
export type Visibility = { spaceId: string } | { public: true };

/** `label` is the path as the operator wrote it, used in messages. */
export function readImportEntries(file: string, kind: ImportKind, label = file): Record<string, unknown>[] {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw new UsageError(
      `cannot read ${label}: ${code === "ENOENT" ? "no such file" : (code ?? String(err))}`,
    );
  }
  return entriesOf(text, label, kind);
}

export function entriesOf(text: string, file: string, kind: ImportKind): Record<string, unknown>[] {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (err) {
    throw new UsageError(`${file} is not valid JSON: ${(err as Error).message}`);
  }
  const list = Array.isArray(doc) ? doc : isObject(doc) ? doc[kind] : undefined;
  if (!Array.isArray(list)) {
    const keys = isObject(doc) ? ` (its keys: ${Object.keys(doc).join(", ") || "none"})` : "";
    throw new UsageError(
      `${file}: expected a JSON array of ${kind}, or an object whose "${kind}" is an array${keys}`,
    );
  }
  if (list.length === 0) throw new UsageError(`${file}: no ${kind} to import`);
  return list.map((entry, i) => {
    if (!isObject(entry)) throw new UsageError(`${file}: ${kind}[${i}] is not an object`);
    return entry;
  });
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** Reads one entry's fields by kind; null counts as absent. Messages name the file, entry and field. */
class EntryReader {
  private readonly known = new Set<string>();

  constructor(
    private readonly entry: Record<string, unknown>,
    private readonly where: string,
  ) {}

  private fail(message: string): never {
    throw new UsageError(`${this.where}: ${message}`);
  }

  private value(key: string): unknown {
    this.known.add(key);
    return this.entry[key] ?? undefined;
  }

  string(key: string): string | undefined {
    const value = this.value(key);
    if (value !== undefined && typeof value !== "string") this.fail(`${key} must be a string`);
    return value;
  }

  name(): string {
    const name = this.string("name");
    if (name === undefined || name.trim() === "") this.fail("name is required");
    return name;
  }

  uuid(key: string): string | undefined {
    const value = this.string(key);
    if (value !== undefined && !isUuid(value)) this.fail(`${key} must be a UUID (got "${value}")`);
    return value;
  }

  boolean(key: string): boolean | undefined {
    const value = this.value(key);
    if (value !== undefined && typeof value !== "boolean") this.fail(`${key} must be true or false`);
    return value;
  }

  strings(key: string): string[] | undefined {
    const value = this.value(key);
    if (value !== undefined && !(Array.isArray(value) && value.every((v) => typeof v === "string"))) {
      this.fail(`${key} must be an array of strings`);
    }
    return value;
  }

  stringMap(key: string): Record<string, string> | undefined {
    const value = this.value(key);
    if (
      value !== undefined &&
      !(isObject(value) && Object.values(value).every((v) => typeof v === "string"))
    ) {
      this.fail(`${key} must be an object of strings`);
    }
    return value as Record<string, string> | undefined;
  }

  /** Call last: a misspelt field would otherwise be dropped without a word. */
  rejectUnknownFields(): void {
    const unknown = Object.keys(this.entry).filter((k) => !this.known.has(k));
    if (unknown.length > 0) this.fail(`unknown field ${unknown.map((k) => `"${k}"`).join(", ")}`);
  }
}

const avatarStatuses: Record<string, AvatarStatus> = {
  ACTIVE: AvatarStatus.ACTIVE,
  INIT: AvatarStatus.INIT,
  DEACTIVATED: AvatarStatus.DEACTIVATED,
  DELETED: AvatarStatus.DELETED,
};

function placement(visibility: Visibility) {
  return "spaceId" in visibility
    ? { spaceId: visibility.spaceId, isPublic: false }
    : { spaceId: "", isPublic: true };
}

export function toAvatars(
  entries: Record<string, unknown>[],
  file: string,
  visibility: Visibility,
): AvatarInit[] {
  return entries.map((entry, i) => {
    const read = new EntryReader(entry, `${file}: avatars[${i}]`);
    const status = read.string("status");
    if (status !== undefined && !(status in avatarStatuses)) {
      throw new UsageError(
        `${file}: avatars[${i}]: status must be one of ${Object.keys(avatarStatuses).join(", ")} (got "${status}")`,
      );
    }
    const defaultVoiceId = read.uuid("default_voice_id");
    // A look seed as in the catalog file ({"seed": ..., "skin_tone": ...}); the catalog checks its names.
    const look = read.stringMap("look");
    const avatar: AvatarInit = {
      id: read.uuid("id") ?? "",
      name: read.name(),
      type: read.string("type") ?? "",
      status: status === undefined ? AvatarStatus.ACTIVE : avatarStatuses[status],
      previewUrl: read.string("preview_url") ?? "",
      ...(defaultVoiceId ? { defaultVoice: { id: defaultVoiceId } } : {}),
      defaultVoiceAgentId: read.uuid("default_voice_agent_id") ?? "",
      is1080p: read.boolean("is_1080p") ?? false,
      sandboxEnabled: read.boolean("sandbox_enabled") ?? false,
      ...(look ? { lookSource: { source: { case: "seed", value: lookSeedOf(look) } } } : {}),
      ...placement(visibility),
    };
    read.rejectUnknownFields();
    return avatar;
  });
}

function lookSeedOf(fields: Record<string, string>) {
  return {
    seed: fields.seed ?? "",
    presentation: fields.presentation ?? "",
    skinTone: fields.skin_tone ?? "",
    hairStyle: fields.hair_style ?? "",
    hairColor: fields.hair_color ?? "",
    outfit: fields.outfit ?? "",
    background: fields.background ?? "",
  };
}

export function toVoices(
  entries: Record<string, unknown>[],
  file: string,
  visibility: Visibility,
): VoiceInit[] {
  return entries.map((entry, i) => {
    const read = new EntryReader(entry, `${file}: voices[${i}]`);
    const voice: VoiceInit = {
      id: read.uuid("id") ?? "",
      name: read.name(),
      language: read.string("language") ?? "",
      gender: read.string("gender") ?? "",
      previewUrl: read.string("preview_url") ?? "",
      voiceEngines: read.strings("voice_engines") ?? [],
      providerVoiceIds: read.stringMap("provider_voice_ids") ?? {},
      ...placement(visibility),
    };
    read.rejectUnknownFields();
    return voice;
  });
}
