import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readBody } from "../src/http/body.js";
import { HttpError } from "../src/http/http-error.js";

/** readBody on a real server (port 0): what each request's body read settled to. */
const LIMIT = 1000;
let server: http.Server;
let url: string;
const outcomes: Promise<Buffer>[] = [];

beforeAll(async () => {
  server = http.createServer((req, res) => {
    const read = readBody(req, LIMIT);
    outcomes.push(read);
    read.then(
      (body) => res.end(`read ${body.length}`),
      (err: unknown) => res.writeHead(err instanceof HttpError ? err.status : 500).end(),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

/** Posts `parts` as a chunked body, one write each; answers the status, or the error when the socket failed. */
function post(parts: string[], headers: Record<string, string> = {}): Promise<number | Error> {
  return new Promise((resolve) => {
    const req = http.request(url, { method: "POST", headers }, (res) => {
      res.resume();
      res.on("end", () => resolve(res.statusCode ?? 0));
    });
    req.on("error", (err) => resolve(err));
    for (const part of parts) req.write(part);
    req.end();
  });
}

const lastOutcome = () => outcomes[outcomes.length - 1] as Promise<Buffer>;

describe("readBody", () => {
  it("answers every chunk of the body, in order", async () => {
    expect(await post(["a".repeat(400), "b".repeat(400), "c".repeat(200)])).toBe(200);
    const body = await lastOutcome();
    expect(body.toString()).toBe(`${"a".repeat(400)}${"b".repeat(400)}${"c".repeat(200)}`);
  });

  it("answers an empty body", async () => {
    expect(await post([])).toBe(200);
    expect((await lastOutcome()).length).toBe(0);
  });

  it("refuses a declared length over the limit with 413 before reading", async () => {
    const status = await post(["x".repeat(LIMIT + 1)], { "content-length": String(LIMIT + 1) });
    expect(status).toBe(413);
    await expect(lastOutcome()).rejects.toMatchObject({ status: 413 });
  });

  it("refuses a chunked body that grows over the limit with 413 and stops reading it", async () => {
    // The server stops reading: the client's upload is cut rather than answered.
    expect(await post(["x".repeat(600), "y".repeat(600)])).toBeInstanceOf(Error);
    await expect(lastOutcome()).rejects.toMatchObject({ status: 413 });
  });

  it("fails when the client goes away in the middle of the body", async () => {
    const before = outcomes.length;
    const req = http.request(url, { method: "POST", headers: { "content-length": "500" } });
    req.on("error", () => {});
    req.write("x".repeat(100));
    await expect.poll(() => outcomes.length).toBe(before + 1);
    req.destroy();
    await expect(lastOutcome()).rejects.toThrow();
  });
});
