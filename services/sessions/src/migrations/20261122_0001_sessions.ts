import { type Kysely, sql } from "kysely";

const inList = (values: readonly string[]) => sql.join(values.map((v) => sql.lit(v)));

const STATES = ["CREATED", "STARTED", "ENDED"];
const MODES = ["FULL", "LITE"];
const SOURCES = ["API", "EMBED", "DEMO"];
const CONNECTION_STATES = ["NEW", "CONNECTED", "DISCONNECTED"];
const END_REASONS = [
  "UNKNOWN",
  "USER_DISCONNECTED",
  "SERVER_ERROR",
  "IDLE_TIMEOUT",
  "NO_CREDITS",
  "USER_CLOSED",
  "AVATAR_DELETED",
  "MAX_DURATION_REACHED",
  "ZOMBIE_SESSION_REAP",
  "AGENT_HANG_UP",
];

/** Session records with their timers, and the single-use tickets of ws_url. */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable("sessions")
    .addColumn("id", "uuid", (c) => c.primaryKey())
    .addColumn("seq", "bigserial", (c) => c.notNull().unique())
    .addColumn("space_id", "uuid", (c) => c.notNull())
    .addColumn("api_key_id", "uuid")
    .addColumn("state", "text", (c) => c.notNull().check(sql`state in (${inList(STATES)})`))
    .addColumn("mode", "text", (c) => c.notNull().check(sql`mode in (${inList(MODES)})`))
    .addColumn("is_sandbox", "boolean", (c) => c.notNull())
    .addColumn("source", "text", (c) => c.notNull().check(sql`source in (${inList(SOURCES)})`))
    .addColumn("avatar_id", "uuid")
    .addColumn("embed_id", "uuid")
    .addColumn("context_id", "uuid")
    .addColumn("voice_agent_id", "uuid")
    .addColumn("memory_id", "uuid")
    .addColumn("config", "jsonb", (c) => c.notNull())
    .addColumn("credit_rate", "integer", (c) => c.notNull().check(sql`credit_rate >= 0`))
    .addColumn("max_session_duration", "integer", (c) => c.notNull().check(sql`max_session_duration > 0`))
    .addColumn("created_at", "timestamptz", (c) => c.notNull())
    .addColumn("updated_at", "timestamptz", (c) => c.notNull())
    .addColumn("started_at", "timestamptz")
    .addColumn("ended_at", "timestamptz")
    .addColumn("end_reason", "text", (c) => c.check(sql`end_reason in (${inList(END_REASONS)})`))
    .addColumn("last_activity_at", "timestamptz", (c) => c.notNull())
    .addColumn("connection_state", "text", (c) =>
      c.notNull().check(sql`connection_state in (${inList(CONNECTION_STATES)})`),
    )
    .addColumn("credits_consumed", "integer", (c) => c.notNull().defaultTo(0))
    .addColumn("escrow_amount", "integer", (c) => c.notNull().defaultTo(0).check(sql`escrow_amount >= 0`))
    .addColumn("charged_minutes", "integer", (c) => c.notNull().defaultTo(0))
    .addColumn("start_deadline_at", "timestamptz")
    .addColumn("idle_deadline_at", "timestamptz")
    .addColumn("max_end_at", "timestamptz")
    .addColumn("next_charge_at", "timestamptz")
    .addColumn("due_at", "timestamptz", (c) =>
      c
        .generatedAlwaysAs(sql`least(start_deadline_at, idle_deadline_at, max_end_at, next_charge_at)`)
        .stored(),
    )
    .addCheckConstraint(
      "sessions_ended_has_reason",
      sql`(state = 'ENDED') = (ended_at is not null and end_reason is not null)`,
    )
    .addCheckConstraint("sessions_started_has_start", sql`state <> 'STARTED' or started_at is not null`)
    .execute();
  await db.schema.createIndex("sessions_space_idx").on("sessions").columns(["space_id", "seq"]).execute();
  await db.schema
    .createIndex("sessions_due_idx")
    .on("sessions")
    .column("due_at")
    .where(sql<boolean>`state <> 'ENDED'`)
    .execute();
  await db.schema
    .createIndex("sessions_running_avatar_idx")
    .on("sessions")
    .column("avatar_id")
    .where(sql<boolean>`state <> 'ENDED'`)
    .execute();

  await db.schema
    .createTable("connect_tickets")
    .addColumn("ticket_hash", "text", (c) => c.primaryKey())
    .addColumn("session_id", "uuid", (c) => c.notNull().references("sessions.id").onDelete("cascade"))
    .addColumn("created_at", "timestamptz", (c) => c.notNull())
    .addColumn("expires_at", "timestamptz", (c) => c.notNull())
    .addColumn("used_at", "timestamptz")
    .execute();
  await db.schema
    .createIndex("connect_tickets_expiry_idx")
    .on("connect_tickets")
    .column("expires_at")
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable("connect_tickets").execute();
  await db.schema.dropTable("sessions").execute();
}
