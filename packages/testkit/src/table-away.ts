import { createDb } from "@avatar/runtime";

/**
 * Runs `run` while one of a service's tables is renamed away (to `<table>_away`), then puts it back: a
 * failure provoked inside that service alone, whatever it does with the table. `url` and `schema` are
 * the service's database and schema; a pool of its own is opened for the renames and closed after.
 */
export async function withTableAway<T>(
  where: { url: string; schema: string },
  table: string,
  run: () => Promise<T>,
): Promise<T> {
  const db = createDb({ url: where.url, schema: where.schema, poolSize: 1 });
  const rename = (from: string, to: string) =>
    db.schema.withSchema(where.schema).alterTable(from).renameTo(to).execute();
  try {
    await rename(table, `${table}_away`);
    try {
      return await run();
    } finally {
      await rename(`${table}_away`, table);
    }
  } finally {
    await db.destroy();
  }
}
