import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { describe, expect, it } from "vitest";
import { callsPerOperation, readServedCalls, servedCalls } from "../src/rpc-calls.js";

const metrics = (startCalls: number, configCalls: number) =>
  [
    "# HELP avatar_rpc_server_requests_total Connect calls served",
    "# TYPE avatar_rpc_server_requests_total counter",
    `avatar_rpc_server_requests_total{service="sessions",procedure="avatar.sessions.v1.SessionsService/StartSession",code="ok"} ${startCalls}`,
    `avatar_rpc_server_requests_total{service="sessions",procedure="avatar.sessions.v1.SessionsService/StartSession",code="failed_precondition"} 2`,
    `avatar_rpc_server_requests_total{service="sessions",procedure="avatar.sessions.v1.SessionsService/GetSessionConfig",code="ok"} ${configCalls}`,
    `avatar_rpc_server_duration_seconds_count{service="sessions",procedure="avatar.sessions.v1.SessionsService/StartSession"} 999`,
    `avatar_rpc_client_requests_total{procedure="avatar.sessions.v1.SessionsService/StartSession",code="ok"} 999`,
  ].join("\n");

describe("servedCalls", () => {
  it("adds up the calls each procedure served over every code, and reads no other metric", () => {
    expect(servedCalls(metrics(10, 4))).toEqual(
      new Map([
        ["avatar.sessions.v1.SessionsService/StartSession", 12],
        ["avatar.sessions.v1.SessionsService/GetSessionConfig", 4],
      ]),
    );
    expect(servedCalls("")).toEqual(new Map());
  });
});

describe("callsPerOperation", () => {
  it("says how many calls of each procedure one operation made between two readings, the most first", () => {
    const before = { calls: servedCalls(metrics(10, 4)), silent: [] };
    const after = { calls: servedCalls(metrics(110, 54)), silent: [] };
    expect(callsPerOperation(before, after, 100)).toBe(
      "SessionsService/StartSession 1.00, SessionsService/GetSessionConfig 0.50",
    );
    // A procedure first called in between counts from nothing; one not called at all is left out.
    const first = { calls: servedCalls(metrics(0, 50)), silent: [] };
    expect(callsPerOperation({ calls: new Map(), silent: [] }, first, 100)).toBe(
      "SessionsService/GetSessionConfig 0.50, SessionsService/StartSession 0.02",
    );
    expect(callsPerOperation(before, before, 100)).toBe("");
  });
});

describe("readServedCalls", () => {
  it("adds up the processes that answer and names those that do not", async () => {
    const server = createServer((req, res) => {
      if (req.url === "/metrics") res.end(metrics(10, 4));
      else res.writeHead(500).end();
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    try {
      const read = await readServedCalls({
        a: `${base}/metrics`,
        b: `${base}/metrics`,
        broken: `${base}/broken`,
        gone: "http://127.0.0.1:1/metrics",
      });
      expect(read.calls.get("avatar.sessions.v1.SessionsService/StartSession")).toBe(24);
      expect(read.silent).toEqual(["broken", "gone"]);
      // A reading with a silent process says so next to its figures.
      expect(callsPerOperation({ calls: new Map(), silent: [] }, read, 24)).toBe(
        "SessionsService/StartSession 1.00, SessionsService/GetSessionConfig 0.33 (without broken, gone: no metrics)",
      );
    } finally {
      server.close();
    }
  });
});
