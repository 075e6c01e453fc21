import { isPreparable } from "@avatar/runtime";
import { Kysely, PostgresDialect } from "kysely";
import pg from "pg";

export interface GenericPlan {
  sql: string;
  /** EXPLAIN's text. */
  plan: string;
  /** The indexes it reads (by an index, index-only or bitmap index scan) and the tables it scans whole. */
  indexes: string[];
  seqScans: string[];
}

/** What a plan reads, from EXPLAIN's text: the indexes its scans go through and the tables it reads whole. */
export function planReads(plan: string): Pick<GenericPlan, "indexes" | "seqScans"> {
  const names = (re: RegExp) => [...plan.matchAll(re)].map((m) => m[1] ?? "");
  return {
    indexes: names(/(?:Index(?: Only)? Scan(?: Backward)? using|Bitmap Index Scan on) (\S+)/g),
    seqScans: names(/Seq Scan on (\S+)/g),
  };
}

/**
 * The statements `run` sends through a Kysely on `url` and `schema`, in order: those the services prepare
 * (queries and data changes; transaction control is left out).
 */
export async function sentStatements<DB>(
  url: string,
  schema: string,
  run: (db: Kysely<DB>) => Promise<unknown>,
): Promise<string[]> {
  const pool = new pg.Pool({ connectionString: url, max: 1, options: `-c search_path=${schema}` });
  const sent: string[] = [];
  const db = new Kysely<DB>({
    dialect: new PostgresDialect({ pool }),
    log: (event) => {
      if (event.level === "query" && isPreparable(event.query.sql)) sent.push(event.query.sql);
    },
  });
  try {
    await run(db);
    return sent;
  } finally {
    await db.destroy();
  }
}

/**
 * The generic plan Postgres gives each statement `run` sends through a Kysely on `url` and `schema`.
 * The services prepare the statements they repeat, and Postgres plans a prepared statement for its
 * parameters' values only five times: after that it keeps one plan for every value whenever that costs no
 * more, as on the small tables of a service's first minutes. A partial index serves that plan only when the
 * query implies the index's predicate without knowing the parameters. Sequential scans are priced out
 * here, so a plan that still has one found no index it could use.
 */
export async function genericPlans<DB>(
  url: string,
  schema: string,
  run: (db: Kysely<DB>) => Promise<unknown>,
): Promise<GenericPlan[]> {
  const sent = await sentStatements(url, schema, run);
  const client = new pg.Client({ connectionString: url, options: `-c search_path=${schema}` });
  await client.connect();
  try {
    await client.query("set plan_cache_mode = force_generic_plan; set enable_seqscan = off");
    const plans: GenericPlan[] = [];
    for (const [i, sql] of sent.entries()) {
      await client.query(`prepare generic_${i} as ${sql}`);
      const params = (sql.match(/\$\d+/g) ?? []).reduce((n, p) => Math.max(n, Number(p.slice(1))), 0);
      const args = params > 0 ? `(${Array(params).fill("null").join(", ")})` : "";
      const { rows } = await client.query(`explain execute generic_${i}${args}`);
      const plan = rows.map((r) => r["QUERY PLAN"]).join("\n");
      plans.push({ sql, plan, ...planReads(plan) });
      await client.query(`deallocate generic_${i}`);
    }
    return plans;
  } finally {
    await client.end();
  }
}
