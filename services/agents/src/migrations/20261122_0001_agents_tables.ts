import { type Kysely, sql } from "kysely";

const now = sql`now()`;

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable("contexts")
    .addColumn("id", "uuid", (c) => c.primaryKey())
    .addColumn("seq", "bigserial", (c) => c.notNull().unique())
    .addColumn("space_id", "uuid", (c) => c.notNull())
    .addColumn("name", "text", (c) => c.notNull())
    .addColumn("prompt", "text", (c) => c.notNull())
    .addColumn("opening_text", "text", (c) => c.notNull().defaultTo(""))
    .addColumn("links", "jsonb", (c) => c.notNull().defaultTo(sql`'[]'::jsonb`))
    .addColumn("is_public", "boolean", (c) => c.notNull().defaultTo(false))
    .addColumn("created_at", "timestamptz", (c) => c.notNull().defaultTo(now))
    .addColumn("updated_at", "timestamptz", (c) => c.notNull().defaultTo(now))
    .execute();
  await db.schema.createIndex("contexts_space_idx").on("contexts").columns(["space_id", "seq"]).execute();

  await db.schema
    .createTable("voice_agents")
    .addColumn("id", "uuid", (c) => c.primaryKey())
    .addColumn("seq", "bigserial", (c) => c.notNull().unique())
    .addColumn("space_id", "uuid", (c) => c.notNull())
    .addColumn("name", "text", (c) => c.notNull())
    .addColumn("agent_type", "text", (c) =>
      c
        .notNull()
        .check(sql`agent_type in ('managed_agent', 'vendorA_agent', 'vendorD_agent', 'vendorB_agent')`),
    )
    .addColumn("configuration", "jsonb", (c) => c.notNull())
    .addColumn("is_public", "boolean", (c) => c.notNull().defaultTo(false))
    .addColumn("created_at", "timestamptz", (c) => c.notNull().defaultTo(now))
    .addColumn("updated_at", "timestamptz", (c) => c.notNull().defaultTo(now))
    .execute();
  await db.schema
    .createIndex("voice_agents_space_idx")
    .on("voice_agents")
    .columns(["space_id", "seq"])
    .execute();
  await sql`create index voice_agents_public_idx on voice_agents (seq) where is_public`.execute(db);

  await db.schema
    .createTable("secrets")
    .addColumn("id", "uuid", (c) => c.primaryKey())
    .addColumn("seq", "bigserial", (c) => c.notNull().unique())
    .addColumn("space_id", "uuid", (c) => c.notNull())
    .addColumn("secret_name", "text", (c) => c.notNull())
    .addColumn("secret_type", "text", (c) =>
      c
        .notNull()
        .check(
          sql`secret_type in ('VENDORA_API_KEY', 'VENDORB_API_KEY', 'VENDORC_API_KEY', 'VENDORD_API_KEY', 'VENDORE_API_KEY')`,
        ),
    )
    .addColumn("sealed_value", "text", (c) => c.notNull())
    .addColumn("key_id", "text", (c) => c.notNull())
    .addColumn("created_at", "timestamptz", (c) => c.notNull().defaultTo(now))
    .execute();
  await db.schema.createIndex("secrets_space_idx").on("secrets").columns(["space_id", "seq"]).execute();

  await db.schema
    .createTable("llm_configurations")
    .addColumn("id", "uuid", (c) => c.primaryKey())
    .addColumn("seq", "bigserial", (c) => c.notNull().unique())
    .addColumn("space_id", "uuid", (c) => c.notNull())
    .addColumn("display_name", "text", (c) => c.notNull())
    .addColumn("model_name", "text", (c) => c.notNull())
    .addColumn("secret_id", "uuid", (c) => c.notNull())
    .addColumn("base_url", "text", (c) => c.notNull())
    .addColumn("created_at", "timestamptz", (c) => c.notNull().defaultTo(now))
    .addColumn("updated_at", "timestamptz", (c) => c.notNull().defaultTo(now))
    .execute();
  await db.schema
    .createIndex("llm_configurations_space_idx")
    .on("llm_configurations")
    .columns(["space_id", "seq"])
    .execute();

  await db.schema
    .createTable("embeds")
    .addColumn("id", "uuid", (c) => c.primaryKey())
    .addColumn("space_id", "uuid", (c) => c.notNull())
    .addColumn("avatar_id", "uuid", (c) => c.notNull())
    .addColumn("context_id", "uuid")
    .addColumn("voice_id", "uuid")
    .addColumn("voice_agent_id", "uuid")
    .addColumn("orientation", "text", (c) =>
      c.notNull().check(sql`orientation in ('horizontal', 'vertical')`),
    )
    .addColumn("max_session_duration", "integer", (c) => c.check(sql`max_session_duration > 0`))
    .addColumn("default_language", "text")
    .addColumn("is_sandbox", "boolean", (c) => c.notNull().defaultTo(false))
    .addColumn("created_at", "timestamptz", (c) => c.notNull().defaultTo(now))
    .execute();
  await db.schema.createIndex("embeds_space_idx").on("embeds").column("space_id").execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const table of ["embeds", "llm_configurations", "secrets", "voice_agents", "contexts"]) {
    await db.schema.dropTable(table).execute();
  }
}
