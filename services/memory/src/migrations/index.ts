import type { Migrations } from "@avatar/runtime";
import * as memoryTables from "./20261122_0001_memory_tables.js";

/** Dated migrations, applied in name order. */
export const migrations: Migrations = {
  "20261122_0001_memory_tables": memoryTables,
};
