import type { Migrations } from "@avatar/runtime";
import * as sessions from "./20261122_0001_sessions.js";
import * as credits from "./20261122_0002_credits.js";
import * as transcriptsAndEvents from "./20261122_0003_transcripts_and_events.js";
import * as outbox from "./20261122_0004_outbox.js";
import * as pipelineWorkers from "./20261123_0005_pipeline_workers.js";
import * as workerTakeover from "./20261124_0006_worker_takeover.js";
import * as embedAdmission from "./20261124_0007_embed_admission_idx.js";
import * as createdNotice from "./20261127_0008_created_notice_from_record.js";

/** Dated migrations, applied in name order. */
export const migrations: Migrations = {
  "20261122_0001_sessions": sessions,
  "20261122_0002_credits": credits,
  "20261122_0003_transcripts_and_events": transcriptsAndEvents,
  "20261122_0004_outbox": outbox,
  "20261123_0005_pipeline_workers": pipelineWorkers,
  "20261124_0006_worker_takeover": workerTakeover,
  "20261124_0007_embed_admission_idx": embedAdmission,
  "20261127_0008_created_notice_from_record": createdNotice,
};
