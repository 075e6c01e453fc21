import { Socket } from "node:net";
import { type Kysely, sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createDb, standalone } from "../src/db.js";
import { isDatabaseUnavailable } from "../src/db-errors.js";
import { createTestDatabase, type TestDatabase, waitFor } from "./support.js";

/** createDb's pipelined connections (pipelined-pool.ts) on the run's Postgres. */

let database: TestDatabase;
let admin: Kysely<unknown>;
beforeAll(async () => {
  database = await createTestDatabase();
  admin = createDb({ url: database.url, schema: "public", poolSize: 1 });
});
afterAll(async () => {
  await admin.destroy();
  await database.drop();
});

const open = (
  poolSize: number,
  pipelineConnections: number,
  onError?: (err: Error) => void,
  applicationName = "pipelined-pool-test",
) => {
  const url = new URL(database.url);
  url.searchParams.set("application_name", applicationName);
  return createDb<unknown>({ url: url.toString(), schema: "public", poolSize, pipelineConnections, onError });
};

/** Runs `fn` with a database of pool 4, one connection of it pipelined (`line`), and destroys it. */
async function withPipeline<T>(
  fn: (line: Kysely<unknown>, db: Kysely<unknown>) => Promise<T>,
  onError?: (err: Error) => void,
): Promise<T> {
  const db = open(4, 1, onError);
  try {
    return await fn(standalone(db), db);
  } finally {
    await db.destroy();
  }
}

const pidOf = async (db: Kysely<unknown>) =>
  (await sql<{ pid: number }>`select pg_backend_pid() as pid`.execute(db)).rows[0]?.pid;

/** Counts the writes of every socket to this test's Postgres while `fn` runs. */
async function countWrites(fn: () => Promise<unknown>): Promise<number> {
  const port = Number(new URL(database.url).port);
  const proto = Socket.prototype as unknown as Record<"_write" | "_writev", (...args: unknown[]) => unknown>;
  const originals = { _write: proto._write, _writev: proto._writev };
  let writes = 0;
  for (const method of ["_write", "_writev"] as const) {
    const original = originals[method];
    proto[method] = function (this: Socket, ...args: unknown[]) {
      if (this.remotePort === port) writes++;
      return original.apply(this, args);
    };
  }
  try {
    await fn();
  } finally {
    Object.assign(proto, originals);
  }
  return writes;
}

describe("createDb's pipelined connections", () => {
  it("answers each of many statements sent at once with its own result, on one connection in one write", async () => {
    await withPipeline(async (line, db) => {
      expect(line).not.toBe(db);
      const pid = await pidOf(line);
      let answers: { n: number; pid: number }[] = [];
      const writes = await countWrites(async () => {
        answers = await Promise.all(
          Array.from({ length: 20 }, async (_, i) => {
            const { rows } = await sql<{
              n: number;
              pid: number;
            }>`select ${i}::int as n, pg_backend_pid() as pid`.execute(line);
            return rows[0] as { n: number; pid: number };
          }),
        );
      });
      expect(answers.map((a) => a.n)).toEqual(Array.from({ length: 20 }, (_, i) => i));
      expect(new Set(answers.map((a) => a.pid))).toEqual(new Set([pid]));
      // A pool's connections would have taken 20 writes (one per statement).
      expect(writes).toBe(1);
    });
  });

  it("fails a failing statement alone: those sent with it are answered", async () => {
    await withPipeline(async (line) => {
      const results = await Promise.allSettled([
        sql<{ n: number }>`select 1 as n`.execute(line),
        sql`select 1 / 0`.execute(line),
        sql<{ n: number }>`select 3 as n`.execute(line),
      ]);
      expect(results.map((r) => r.status)).toEqual(["fulfilled", "rejected", "fulfilled"]);
      expect(String((results[1] as PromiseRejectedResult).reason)).toMatch(/division by zero/);
      expect((results[2] as PromiseFulfilledResult<{ rows: { n: number }[] }>).value.rows).toEqual([
        { n: 3 },
      ]);
    });
  });

  it("refuses a transaction, which would take the other callers' statements into it", async () => {
    await withPipeline(async (line) => {
      let ran = false;
      await expect(
        line.transaction().execute(async () => {
          ran = true;
        }),
      ).rejects.toThrow(/not a standalone statement: begin/);
      expect(ran).toBe(false);
      // The connection goes on serving.
      expect(await pidOf(line)).toBeDefined();
    });
  });

  it("takes its connections out of the pool's size, at most half of them", async () => {
    // Every connection busy at once: three transactions and three statements of the pipeline sleeping,
    // then the connections counted by the database's own application name (those of the tests before
    // may linger a moment after they closed).
    const connectionsWhenBusy = async (poolSize: number, name: string) => {
      const db = open(poolSize, 2, undefined, name);
      try {
        await Promise.all([
          ...[1, 2, 3].map(() => db.transaction().execute((trx) => sql`select pg_sleep(0.2)`.execute(trx))),
          ...[1, 2, 3].map(() => sql`select pg_sleep(0.2)`.execute(standalone(db))),
        ]);
        const { rows } = await sql<{ n: string }>`
          select count(*) as n from pg_stat_activity where application_name = ${name}`.execute(admin);
        return { connections: Number(rows[0]?.n), pipelined: standalone(db) !== db };
      } finally {
        await db.destroy();
      }
    };
    expect(await connectionsWhenBusy(4, "pipelined-pool-four")).toEqual({ connections: 4, pipelined: true });
    // A pool of one keeps its connection: no pipeline, and standalone statements use the pool.
    expect(await connectionsWhenBusy(1, "pipelined-pool-one")).toEqual({ connections: 1, pipelined: false });
  });

  it("goes on with a new connection after its connection was cut, and says so", async () => {
    const errors: Error[] = [];
    await withPipeline(
      async (line) => {
        const pid = await pidOf(line);
        await sql`select pg_terminate_backend(${pid})`.execute(admin);
        await waitFor("the cut reported", () => errors.length > 0);
        const again = await pidOf(line);
        expect(again).toBeDefined();
        expect(again).not.toBe(pid);
      },
      (err) => errors.push(err),
    );
  });

  it("answers a prepared statement again after a migration changed its result's columns", async () => {
    await withPipeline(async (line) => {
      await sql`create table pipelined_stale (a int)`.execute(admin);
      await sql`insert into pipelined_stale values (1)`.execute(admin);
      const read = () => sql<Record<string, number>>`select * from pipelined_stale`.execute(line);
      await read();
      await read(); // now prepared on the connection
      await sql`alter table pipelined_stale add column b int default 2`.execute(admin);
      expect((await read()).rows).toEqual([{ a: 1, b: 2 }]);
    });
  });

  it("closes its connections with the database; a statement after that is refused as unavailable", async () => {
    const db = open(4, 2);
    const pid = await pidOf(standalone(db));
    await db.destroy();
    await waitFor("the pipelined connection's backend gone", async () => {
      const { rows } = await sql<{ n: string }>`
        select count(*) as n from pg_stat_activity where pid = ${pid}`.execute(admin);
      return rows[0]?.n === "0";
    });
    const refused = await pidOf(standalone(db)).then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(String(refused)).toMatch(/closed/);
    expect(isDatabaseUnavailable(refused)).toBe(true);
  });
});
