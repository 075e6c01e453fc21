import type { Migrations } from "@avatar/runtime";
import * as agentsTables from "./20261122_0001_agents_tables.js";
import * as embedVideoSettings from "./20261123_0002_embed_video_settings.js";

/** Dated migrations, applied in name order. */
export const migrations: Migrations = {
  "20261122_0001_agents_tables": agentsTables,
  "20261123_0002_embed_video_settings": embedVideoSettings,
};
