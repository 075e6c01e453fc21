import type { Migrations } from "@avatar/runtime";
import * as catalogTables from "./20261122_0001_catalog_tables.js";
import * as avatarLooks from "./20261123_0002_avatar_looks.js";
import * as lookGenerator from "./20261124_0003_look_generator.js";

/** Dated migrations, applied in name order. */
export const migrations: Migrations = {
  "20261122_0001_catalog_tables": catalogTables,
  "20261123_0002_avatar_looks": avatarLooks,
  "20261124_0003_look_generator": lookGenerator,
};
