import { type QueryCreator, sql } from "kysely";

/**
 * Rows to insert whose result nobody reads, made as CTEs of another statement: on a loaded machine a
 * round trip to Postgres costs more than the write itself, so a change and what goes with it (a notice,
 * an outbox event, a ledger row) travel as one statement.
 */
export interface JoinedInsert {
  into: string;
  rows: readonly Record<string, unknown>[];
}

// biome-ignore lint/suspicious/noExplicitAny: the tables are named at run time; each caller's rows are typed where made
type AnyDb = QueryCreator<any>;

/** Makes `insert` as a statement of its own (when there is no other statement to join). */
export async function runInsert<DB>(db: QueryCreator<DB>, insert: JoinedInsert): Promise<void> {
  await (db as AnyDb)
    .insertInto(insert.into)
    .values([...insert.rows])
    .execute();
}

/**
 * `db` with `inserts` as CTEs of whatever statement is built on it. Postgres makes every data-modifying
 * CTE, read or not, on the statement's snapshot: the inserts must not touch the rows of the statement.
 */
export function joinInserts<DB>(db: QueryCreator<DB>, inserts: readonly JoinedInsert[]): QueryCreator<DB> {
  let joined = db as AnyDb;
  inserts.forEach((insert, i) => {
    joined = joined.with(`joined_${i}`, (q) => q.insertInto(insert.into).values([...insert.rows]));
  });
  return joined as QueryCreator<DB>;
}

/**
 * As joinInserts, but the rows are inserted only when the CTE `guard` (defined before them) has a row.
 * A data-modifying CTE runs whether or not the statement's own change matched anything, so a conditional
 * change takes its writes with it this way: `insert into t (...) select $1, $2, ... from guard`, one CTE
 * a row, each selecting from the one before (which answers a row when it inserted one), so they are
 * inserted in order (a bigserial id keeps the order given). Postgres types the parameters by the target
 * columns.
 */
export function joinInsertsIf<DB>(
  db: QueryCreator<DB>,
  guard: string,
  inserts: readonly JoinedInsert[],
): QueryCreator<DB> {
  let joined = db as AnyDb;
  let previous = guard;
  const rows = inserts.flatMap((insert) => insert.rows.map((row) => ({ into: insert.into, row })));
  rows.forEach(({ into, row }, i) => {
    const columns = Object.keys(row);
    const values = sql.join(columns.map((c) => sql`${row[c]}`));
    const after = previous;
    previous = `joined_${i}`;
    joined = joined.with(previous, (q) =>
      q
        .insertInto(into)
        .columns(columns)
        .expression(sql`select ${values} from ${sql.table(after)}`)
        .returning(sql<number>`1`.as("inserted")),
    );
  });
  return joined as QueryCreator<DB>;
}
