import pg from "pg";
import {
  isPreparable,
  isStalePlan,
  type PreparingClient,
  type StatementNames,
} from "./prepared-statements.js";

/**
 * A few shared connections in pg's pipeline mode for statements that stand alone (one query or data
 * change, no transaction around it). A statement goes out behind those still out on its connection,
 * with its own Sync: it is its own implicit transaction, and a failure fails only itself. The statements
 * issued in one turn of the event loop leave in one write (the socket is corked until the turn's end) and
 * Postgres reads them in one go: under load one system call and one wake-up of its backend for several
 * statements, where a pool's connections cost one of each per statement.
 *
 * Transaction control is refused (only a query or data change is taken): a `begin` on a shared connection
 * would take everybody else's statements into its transaction. A statement that waits for a lock holds up
 * those behind it on its connection, so a transaction must never wait for a standalone statement while it
 * holds locks.
 */
export interface PipelinedPoolOptions {
  /** How each connection opens (the pool's settings: its URL, schema and connect timeout). */
  connection: pg.ClientConfig;
  /** How many connections; each is opened at its first statement, and again after it failed. */
  connections: number;
  onError?: (err: Error) => void;
}

interface Line {
  client: pg.Client;
  ready: Promise<unknown>;
  /** Statements sent or waiting on this connection. */
  out: number;
  corked: boolean;
}

type Corkable = { cork(): void; uncork(): void };

/** What a statement sent after the database was destroyed fails with (db-errors.ts: unavailable). */
export const PIPELINE_CLOSED = "the database's pipelined connections are closed";

export function pipelinedPool(config: PipelinedPoolOptions, names: StatementNames) {
  const lines: (Line | undefined)[] = Array.from({ length: config.connections }, () => undefined);
  let ended = false;

  const open = (slot: number): Line => {
    const client = new pg.Client({ ...config.connection, pipeline: true } as pg.ClientConfig);
    const forget = () => {
      if (lines[slot] === line) lines[slot] = undefined;
    };
    client.on("error", (err) => {
      forget();
      config.onError?.(err);
    });
    client.on("end", forget);
    const ready = client.connect().catch((err: unknown) => {
      forget();
      throw err;
    });
    const line: Line = { client, ready, out: 0, corked: false };
    lines[slot] = line;
    return line;
  };

  /** The connection with the fewest statements out. */
  const pick = (): Line => {
    let best = lines[0] ?? open(0);
    for (let i = 1; i < lines.length && best.out > 0; i++) {
      const line = lines[i] ?? open(i);
      if (line.out < best.out) best = line;
    }
    return best;
  };

  const run = async (text: string, values: unknown[] | undefined) => {
    if (ended) throw new Error(PIPELINE_CLOSED);
    if (!isPreparable(text)) throw new Error(`not a standalone statement: ${text.slice(0, 60)}`);
    const line = pick();
    line.out++;
    try {
      await line.ready;
      corkForTurn(line);
      const name = names.nameFor(text);
      if (!name) return await line.client.query(text, values);
      try {
        return await line.client.query({ name, text, values });
      } catch (err) {
        if (!isStalePlan(err)) throw err;
        // A migration changed what the prepared statement answers (prepared-statements.ts): every name
        // is given up, and this one runs unnamed.
        names.forgetAll();
        return await line.client.query(text, values);
      }
    } finally {
      line.out--;
    }
  };

  const client = {
    // Kysely passes no cursor: its dialect here has none, so it refuses to stream.
    query: (text: string, values?: readonly unknown[]) => run(text, values as unknown[] | undefined),
    release() {},
  } as PreparingClient;

  return {
    /** Kysely asks for a connection per statement: all share this one client. */
    async connect(): Promise<PreparingClient> {
      return client;
    },
    /** Open connections, and the statements sent or waiting on them (its metric: db-pool.ts). */
    stats(): { connections: number; statements: number } {
      const open = lines.filter((line) => line !== undefined);
      return { connections: open.length, statements: open.reduce((n, line) => n + line.out, 0) };
    },
    get ended(): boolean {
      return ended;
    },
    async end(): Promise<void> {
      ended = true;
      await Promise.all(lines.map((line) => line?.client.end().catch(() => {})));
    },
  };
}

/** What is written to the connection in this turn leaves in one write, at the turn's end. */
function corkForTurn(line: Line): void {
  if (line.corked) return;
  const stream = (line.client as unknown as { connection: { stream: Corkable } }).connection.stream;
  line.corked = true;
  stream.cork();
  setImmediate(() => {
    line.corked = false;
    stream.uncork();
  });
}
