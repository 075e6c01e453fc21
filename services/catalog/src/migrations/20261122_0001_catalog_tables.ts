import { type Kysely, sql } from "kysely";

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable("languages")
    .addColumn("code", "text", (c) => c.primaryKey())
    .addColumn("language", "text", (c) => c.notNull())
    .addColumn("position", "integer", (c) => c.notNull())
    .execute();

  await db.schema
    .createTable("llm_models")
    .addColumn("provider", "text", (c) => c.notNull())
    .addColumn("model", "text", (c) => c.notNull())
    .addColumn("position", "integer", (c) => c.notNull())
    .addPrimaryKeyConstraint("llm_models_pk", ["provider", "model"])
    .execute();

  await db.schema
    .createTable("voices")
    .addColumn("id", "uuid", (c) => c.primaryKey())
    .addColumn("space_id", "uuid")
    .addColumn("name", "text", (c) => c.notNull())
    .addColumn("language", "text", (c) => c.notNull().defaultTo(""))
    .addColumn("gender", "text", (c) => c.notNull().defaultTo(""))
    .addColumn("preview_url", "text", (c) => c.notNull().defaultTo(""))
    .addColumn("is_public", "boolean", (c) => c.notNull().defaultTo(false))
    .addColumn("voice_engines", sql`text[]`, (c) => c.notNull().defaultTo(sql`'{}'`))
    .addColumn("provider_voice_ids", "jsonb", (c) => c.notNull().defaultTo(sql`'{}'::jsonb`))
    .addColumn("created_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn("updated_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await db.schema.createIndex("voices_space_idx").on("voices").column("space_id").execute();

  await db.schema
    .createTable("avatars")
    .addColumn("id", "uuid", (c) => c.primaryKey())
    .addColumn("seq", "bigserial", (c) => c.notNull().unique())
    .addColumn("space_id", "uuid")
    .addColumn("name", "text", (c) => c.notNull())
    .addColumn("type", "text", (c) => c.notNull().defaultTo("VIDEO"))
    .addColumn("status", "text", (c) =>
      c.notNull().check(sql`status in ('ACTIVE', 'INIT', 'DEACTIVATED', 'DELETED')`),
    )
    .addColumn("preview_url", "text", (c) => c.notNull().defaultTo(""))
    .addColumn("default_voice_id", "uuid", (c) => c.references("voices.id").onDelete("set null"))
    .addColumn("default_voice_agent_id", "uuid")
    .addColumn("is_1080p", "boolean", (c) => c.notNull().defaultTo(false))
    .addColumn("is_public", "boolean", (c) => c.notNull().defaultTo(false))
    .addColumn("sandbox_enabled", "boolean", (c) => c.notNull().defaultTo(false))
    .addColumn("expires_at", "timestamptz")
    .addColumn("error_message", "text", (c) => c.notNull().defaultTo(""))
    .addColumn("created_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn("updated_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await db.schema.createIndex("avatars_space_idx").on("avatars").columns(["space_id", "seq"]).execute();
  await db.schema.createIndex("avatars_public_idx").on("avatars").columns(["is_public", "seq"]).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const table of ["avatars", "voices", "llm_models", "languages"]) {
    await db.schema.dropTable(table).execute();
  }
}
