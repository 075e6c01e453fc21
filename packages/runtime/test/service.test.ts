import { createMemoryBus } from "@avatar/bus";
import { CatalogService } from "@avatar/contracts/catalog";
import { Code, ConnectError } from "@connectrpc/connect";
import { Kysely, PostgresDialect, sql } from "kysely";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connectClient, createClients } from "../src/clients.js";
import { standalone } from "../src/db.js";
import { REQUEST_ID_HEADER, requestIdOf } from "../src/request-id.js";
import { listen } from "../src/server.js";
import {
  type ServiceModule,
  type StartServiceOptions,
  type StatelessServiceModule,
  startService,
} from "../src/service.js";
import { collectingLogger, createTestDatabase, type TestDatabase, testIdentity } from "./support.js";

interface LangDb {
  langs: { code: string };
}

let database: TestDatabase;
beforeAll(async () => {
  database = await createTestDatabase();
});
afterAll(async () => {
  await database.drop();
});

/** A module named like the catalog (the name is its schema) whose one route reads its own table. */
function module(events: string[], ready?: () => Promise<boolean>): ServiceModule<LangDb> {
  return {
    name: "catalog",
    migrations: {
      "0001_langs": {
        async up(db) {
          await db.schema.createTable("langs").addColumn("code", "text").execute();
          await sql`insert into langs values ('en'), ('fr')`.execute(db);
        },
      },
    },
    build({ db, log }) {
      events.push("build");
      return {
        name: "catalog",
        routes: (router) =>
          router.service(CatalogService, {
            async listLanguages(_req, ctx) {
              log.info("listing languages", { request_id: requestIdOf(ctx.values) });
              const rows = await db.selectFrom("langs").select("code").orderBy("code").execute();
              return { languages: rows.map((r) => ({ code: r.code, language: r.code })) };
            },
          }),
        start: async () => {
          events.push("start");
        },
        stop: async () => {
          events.push("stop");
        },
        ...(ready ? { ready } : {}),
      };
    },
  };
}

async function options(log = collectingLogger().log): Promise<StartServiceOptions> {
  return {
    databaseUrl: database.url,
    bus: createMemoryBus(),
    log,
    clients: createClients({}, testIdentity("catalog")),
    env: {},
    listening: await listen({ port: 0, host: "127.0.0.1" }),
    identity: testIdentity("catalog"),
    poolSize: 2,
  };
}

describe("startService", () => {
  it("migrates its schema, serves its routes with health endpoints, starts and stops its work", async () => {
    const events: string[] = [];
    const { log, records } = collectingLogger();
    const opts = await options(log);
    const service = await startService(module(events), opts);
    expect(events).toEqual(["build", "start"]);
    expect(records().find((r) => r.msg === "migrated")).toMatchObject({
      service: "catalog",
      applied: ["0001_langs"],
    });

    const url = opts.listening.url;
    const client = connectClient(CatalogService, url, testIdentity("gateway"));
    const res = await client.listLanguages({}, { headers: { [REQUEST_ID_HEADER]: "req-langs" } });
    expect(res.languages.map((l) => l.code)).toEqual(["en", "fr"]);
    expect(records().find((r) => r.msg === "listing languages")).toMatchObject({
      service: "catalog",
      request_id: "req-langs",
    });
    expect((await fetch(`${url}/healthz`)).status).toBe(200);
    expect((await fetch(`${url}/readyz`)).status).toBe(200);

    await service.stop();
    expect(events).toEqual(["build", "start", "stop"]);
    expect(opts.listening.server.listening).toBe(false);
  });

  it("does not migrate again on the next start, and is not ready while the app says so", async () => {
    const events: string[] = [];
    const { log, records } = collectingLogger();
    const opts = await options(log);
    let ready = false;
    const service = await startService(
      module(events, async () => ready),
      opts,
    );
    try {
      expect(records().filter((r) => r.msg === "migrated")).toEqual([]);
      expect((await fetch(`${opts.listening.url}/readyz`)).status).toBe(503);
      ready = true;
      expect((await fetch(`${opts.listening.url}/readyz`)).status).toBe(200);
    } finally {
      await service.stop();
    }
  });

  it("refuses to serve with another service's identity", async () => {
    const opts = await options();
    await expect(startService(module([]), { ...opts, identity: testIdentity("tokens") })).rejects.toThrow(
      "the catalog service was given the identity of tokens",
    );
    await opts.listening.close();
  });

  it("fails with the migration's name when a migration fails, and serves nothing", async () => {
    const opts = await options();
    const broken: ServiceModule<LangDb> = {
      ...module([]),
      migrations: {
        ...module([]).migrations,
        "0002_broken": { up: async (db) => void (await sql`select nope`.execute(db)) },
      },
    };
    await expect(startService(broken, opts)).rejects.toThrow(
      /migration 0002_broken of schema catalog failed/,
    );
    expect((await fetch(`${opts.listening.url}/healthz`)).status).toBe(503);
    await opts.listening.close();
  });

  it("gives pipelined connections only to a module that pipelines its standalone statements", async () => {
    const pipelined = async (pipelinesStatements: boolean) => {
      let seen: boolean | undefined;
      const base = module([]);
      const pipelining: ServiceModule<LangDb> = {
        ...base,
        pipelinesStatements,
        build: (deps) => {
          seen = standalone(deps.db) !== deps.db;
          return base.build(deps);
        },
      };
      const service = await startService(pipelining, await options());
      await service.stop();
      return seen;
    };
    expect(await pipelined(true)).toBe(true);
    expect(await pipelined(false)).toBe(false);
  });
});

describe("startService with a service that keeps no data", () => {
  /** A module named like the pipeline whose build records what it was given. */
  const stateless = (given: string[]): StatelessServiceModule => ({
    name: "pipeline",
    build(deps) {
      given.push(...Object.keys(deps).sort());
      return { name: "pipeline", routes: () => {} };
    },
  });

  it("gives it no database: no schema, no connection, ready while Postgres is unreachable", async () => {
    const given: string[] = [];
    const listening = await listen({ port: 0, host: "127.0.0.1" });
    const service = await startService(stateless(given), {
      // A closed port: a pool on it would fail the start (migrations) or the readiness.
      databaseUrl: "postgres://nobody@127.0.0.1:1/none",
      bus: createMemoryBus(),
      log: collectingLogger().log,
      clients: createClients({}, testIdentity("pipeline")),
      env: {},
      listening,
      identity: testIdentity("pipeline"),
    });
    try {
      expect(given).toEqual(["bus", "clients", "env", "log"]);
      expect((await fetch(`${listening.url}/readyz`)).status).toBe(200);
      const db = new Kysely<unknown>({
        dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: database.url }) }),
      });
      try {
        const { rows } = await sql<{ n: number }>`
          select count(*)::int as n from information_schema.schemata where schema_name = 'pipeline'`.execute(
          db,
        );
        expect(rows[0]?.n).toBe(0);
      } finally {
        await db.destroy();
      }
    } finally {
      await service.stop();
    }
    expect(listening.server.listening).toBe(false);
  });

  it("refuses a service that keeps data without a database", async () => {
    const opts = await options();
    const { databaseUrl: _, ...withoutDatabase } = opts;
    await expect(startService(module([]), withoutDatabase)).rejects.toThrow(
      "the catalog service keeps data and was given no database",
    );
    await opts.listening.close();
  });
});

describe("createClients", () => {
  it("makes a client only for services with a URL, and names the missing setting", async () => {
    const clients = createClients({ catalog: "http://127.0.0.1:1" }, testIdentity("gateway"));
    expect(clients.catalog).toBe(clients.catalog);
    expect(() => clients.tokens).toThrow("no URL configured for the tokens service (TOKENS_URL)");
    const err = await clients.catalog.listLanguages({}, { timeoutMs: 5_000 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConnectError);
    expect((err as ConnectError).code).toBe(Code.Unavailable);
  });
});
