import { type Context, ContextSchema } from "@avatar/contracts/agents";
import { toTimestamp } from "@avatar/runtime";
import { create } from "@bufbuild/protobuf";
import { placeholderNames } from "../placeholders.js";
import type { ContextRow } from "../schema.js";

export function contextToProto(row: ContextRow): Context {
  return create(ContextSchema, {
    id: row.id,
    spaceId: row.space_id,
    name: row.name,
    prompt: row.prompt,
    openingText: row.opening_text,
    links: row.links.map((l) => ({ url: l.url, faq: l.faq })),
    isPublic: row.is_public,
    requiredDynamicVariables: placeholderNames(row.prompt, row.opening_text),
    createdAt: toTimestamp(row.created_at),
    updatedAt: toTimestamp(row.updated_at),
  });
}
