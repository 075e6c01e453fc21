import type { LookSeed } from "@avatar/contracts/catalog";
import type { LookSeedFields } from "./schema.js";

/**
 * A look's seed as the catalog file and import files write it (snake_case fields) and as the contracts
 * carry it (LookSeed): one mapping, both ways.
 */
const FIELDS = [
  ["seed", "seed"],
  ["presentation", "presentation"],
  ["skin_tone", "skinTone"],
  ["hair_style", "hairStyle"],
  ["hair_color", "hairColor"],
  ["outfit", "outfit"],
  ["background", "background"],
] as const;

type SeedInit = Omit<LookSeed, "$typeName" | "$unknown">;

/** The LookSeed of a file's `look` fields (absent fields empty: the generator picks them from the seed). */
export function lookSeedOf(fields: LookSeedFields): SeedInit {
  return Object.fromEntries(
    FIELDS.map(([file, proto]) => [proto, fields[file] ?? ""]),
  ) as unknown as SeedInit;
}

/** A LookSeed's fields as the file writes them, empty ones left out. */
export function lookSeedFields(seed: SeedInit): LookSeedFields {
  return Object.fromEntries(FIELDS.map(([file, proto]) => [file, seed[proto]]).filter(([, v]) => v !== ""));
}
