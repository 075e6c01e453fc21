import { randomBytes } from "node:crypto";
import pg from "pg";

export interface TestDatabase {
  url: string;
  drop(): Promise<void>;
}

function withDatabase(url: string, database: string): string {
  const u = new URL(url);
  u.pathname = `/${database}`;
  return u.toString();
}

/**
 * The run's Postgres server (globalSetup provides it). Vitest is imported here, not at the top: a process
 * a test starts (the browser media test's server) imports this package outside vitest, where importing
 * it throws.
 */
async function adminUrl(): Promise<string> {
  const { inject } = await import("vitest");
  return inject("pgAdminUrl");
}

async function admin<T>(fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: await adminUrl() });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

/** A fresh, empty database on the run's Postgres server, dropped by `drop()`. */
export async function createTestDatabase(): Promise<TestDatabase> {
  const name = `t_${randomBytes(6).toString("hex")}`;
  await admin((c) => c.query(`create database ${name}`));
  return {
    url: withDatabase(await adminUrl(), name),
    drop: () => admin((c) => c.query(`drop database if exists ${name} with (force)`)).then(() => {}),
  };
}
