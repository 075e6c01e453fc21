import pg from "pg";

/** One statement's share of a measurement: how often it ran per operation and what a run cost. */
export interface StatementFigure {
  callsPerOp: number;
  /** Postgres's time executing it, per run (planning not included), in microseconds. */
  meanUs: number;
  /** Its rows per run. */
  rows: number;
  query: string;
}

/** The settings a server needs for StatementStats. */
export const statementStatsSettings = [
  "shared_preload_libraries=pg_stat_statements",
  "pg_stat_statements.max=1000",
];

/**
 * What each statement cost Postgres during one measurement (`BENCH_PG_STATEMENTS`), from
 * pg_stat_statements: the server's statements of every database, forgotten before each run.
 */
export class StatementStats {
  constructor(private readonly url: string) {}

  async start(): Promise<void> {
    await this.query("create extension if not exists pg_stat_statements");
  }

  async reset(): Promise<void> {
    await this.query("select pg_stat_statements_reset()");
  }

  /** The `top` statements by their total time, per operation of `ops`. */
  async perOp(ops: number, top: number): Promise<StatementFigure[]> {
    const rows = await this.query(
      `select calls::float8 as calls, total_exec_time as total_ms, rows::float8 as rows, query
         from pg_stat_statements where query not like '%pg_stat_statements%'
         order by total_exec_time desc limit $1`,
      [top],
    );
    return rows.map((r) => ({
      callsPerOp: Number(r.calls) / ops,
      meanUs: (Number(r.total_ms) * 1000) / Number(r.calls),
      rows: Number(r.rows) / Number(r.calls),
      query: String(r.query).replace(/\s+/g, " "),
    }));
  }

  private async query(text: string, values: unknown[] = []): Promise<Record<string, unknown>[]> {
    const client = new pg.Client({ connectionString: this.url });
    await client.connect();
    try {
      return (await client.query(text, values)).rows;
    } finally {
      await client.end();
    }
  }
}
