/**
 * The floor of `pnpm bench`, as its own process: a bare node:http server that does one Postgres insert
 * per request and answers a small JSON body. DATABASE_URL and FLOOR_POOL_SIZE (default 10, a service's
 * pool) from the environment; prints `{"url": ...}` once it listens.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import pg from "pg";

const pool = new pg.Pool({
  connectionString: process.env.DATABASE_URL,
  max: Number(process.env.FLOOR_POOL_SIZE ?? 10),
});
await pool.query("create schema if not exists bench");
await pool.query(
  "create table if not exists bench.floor (id bigserial primary key, payload jsonb not null, created_at timestamptz not null default now())",
);
const server = http.createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on("data", (c: Buffer) => chunks.push(c));
  req.on("end", () => {
    pool
      .query("insert into bench.floor (payload) values ($1) returning id", [
        Buffer.concat(chunks).toString("utf8") || "{}",
      ])
      .then((r) => {
        const body = JSON.stringify({ id: String(r.rows[0]?.id) });
        res.writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(body) });
        res.end(body);
      })
      .catch(() => {
        res.writeHead(500);
        res.end();
      });
  });
});
server.keepAliveTimeout = 65_000;
server.listen(0, "127.0.0.1", () => {
  const { port } = server.address() as AddressInfo;
  process.stdout.write(`${JSON.stringify({ url: `http://127.0.0.1:${port}` })}\n`);
});
process.once("SIGTERM", () => {
  server.closeAllConnections();
  server.close(() => void pool.end().then(() => process.exit(0)));
});
