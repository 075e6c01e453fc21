import type { Migrations } from "@avatar/runtime";
import * as webhooksTables from "./20261124_0001_webhooks_tables.js";

/** Dated migrations, applied in name order. */
export const migrations: Migrations = {
  "20261124_0001_webhooks_tables": webhooksTables,
};
