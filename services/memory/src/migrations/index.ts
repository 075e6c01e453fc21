import type { Migrations } from "@avatar/runtime";
import * as memoryTables from "./20261122_0001_memory_tables.js";
import * as outbox from "./20261124_0002_outbox.js";

/** Dated migrations, applied in name order. */
export const migrations: Migrations = {
  "20261122_0001_memory_tables": memoryTables,
  "20261124_0002_outbox": outbox,
};
