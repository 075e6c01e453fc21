import { type Kysely, sql } from "kysely";

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable("endpoints")
    .addColumn("id", "uuid", (c) => c.primaryKey())
    .addColumn("space_id", "uuid", (c) => c.notNull())
    .addColumn("url", "text", (c) => c.notNull())
    .addColumn("event_types", "jsonb", (c) => c.notNull())
    .addColumn("description", "text", (c) => c.notNull().defaultTo(""))
    .addColumn("secret_sealed", "text", (c) => c.notNull())
    .addColumn("created_at", "timestamptz", (c) => c.notNull())
    .addColumn("disabled_at", "timestamptz")
    .addColumn("disabled_reason", "text")
    .addColumn("failing_since", "timestamptz")
    .execute();
  await db.schema
    .createIndex("endpoints_space")
    .on("endpoints")
    .columns(["space_id", "created_at"])
    .execute();

  await db.schema
    .createTable("deliveries")
    .addColumn("id", "uuid", (c) => c.primaryKey())
    .addColumn("endpoint_id", "uuid", (c) => c.notNull().references("endpoints.id").onDelete("cascade"))
    .addColumn("message_id", "text", (c) => c.notNull())
    .addColumn("event_type", "text", (c) => c.notNull())
    .addColumn("payload", "text", (c) => c.notNull())
    .addColumn("status", "text", (c) => c.notNull().check(sql`status in ('pending', 'delivered', 'failed')`))
    .addColumn("attempts", "integer", (c) => c.notNull().defaultTo(0))
    .addColumn("created_at", "timestamptz", (c) => c.notNull())
    .addColumn("next_attempt_at", "timestamptz")
    .addColumn("delivered_at", "timestamptz")
    .addColumn("seq", "bigserial", (c) => c.notNull())
    // An event redelivered by the bus becomes the same delivery, not a second one.
    .addUniqueConstraint("deliveries_once", ["endpoint_id", "message_id"])
    .execute();
  await db.schema
    .createIndex("deliveries_due")
    .on("deliveries")
    .column("next_attempt_at")
    .where(sql.ref("status"), "=", "pending")
    .execute();
  await db.schema.createIndex("deliveries_log").on("deliveries").columns(["endpoint_id", "seq"]).execute();

  await db.schema
    .createTable("delivery_attempts")
    .addColumn("id", "bigserial", (c) => c.primaryKey())
    .addColumn("delivery_id", "uuid", (c) => c.notNull().references("deliveries.id").onDelete("cascade"))
    .addColumn("attempted_at", "timestamptz", (c) => c.notNull())
    .addColumn("response_status", "integer")
    .addColumn("error", "text")
    .addColumn("duration_ms", "integer", (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex("delivery_attempts_delivery")
    .on("delivery_attempts")
    .column("delivery_id")
    .execute();

  await db.schema
    .createTable("transcript_checks")
    .addColumn("session_id", "uuid", (c) => c.primaryKey())
    .addColumn("space_id", "uuid", (c) => c.notNull())
    .addColumn("ended_at", "timestamptz", (c) => c.notNull())
    .addColumn("due_at", "timestamptz", (c) => c.notNull())
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const table of ["transcript_checks", "delivery_attempts", "deliveries", "endpoints"]) {
    await db.schema.dropTable(table).execute();
  }
}
