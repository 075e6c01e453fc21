import type { Migrations } from "@avatar/runtime";

/** Dated migrations, applied in name order. */
export const migrations: Migrations = {};
