import http from "node:http";
import type { AddressInfo } from "node:net";
import pg from "pg";

/**
 * The baseline: a bare node:http server that does one Postgres insert per request and answers a small
 * JSON body, on the same Postgres as the suite.
 */
export interface Baseline {
  url: string;
  close(): Promise<void>;
}

export async function startBaseline(databaseUrl: string, poolSize: number): Promise<Baseline> {
  const pool = new pg.Pool({ connectionString: databaseUrl, max: poolSize });
  await pool.query("create schema if not exists bench");
  await pool.query(
    "create table if not exists bench.baseline (id bigserial primary key, payload jsonb not null, created_at timestamptz not null default now())",
  );
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      pool
        .query("insert into bench.baseline (payload) values ($1) returning id", [
          Buffer.concat(chunks).toString("utf8") || "{}",
        ])
        .then((r) => {
          const body = JSON.stringify({ id: String(r.rows[0]?.id) });
          res.writeHead(200, {
            "content-type": "application/json",
            "content-length": Buffer.byteLength(body),
          });
          res.end(body);
        })
        .catch(() => {
          res.writeHead(500);
          res.end();
        });
    });
  });
  server.keepAliveTimeout = 65_000;
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: async () => {
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await pool.end();
    },
  };
}
