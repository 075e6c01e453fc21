import { describe, expect, it } from "vitest";
import { callsPerOperation, servedCalls } from "../src/rpc-calls.js";

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
    const before = servedCalls(metrics(10, 4));
    const after = servedCalls(metrics(110, 54));
    expect(callsPerOperation(before, after, 100)).toBe(
      "SessionsService/StartSession 1.00, SessionsService/GetSessionConfig 0.50",
    );
    // A procedure first called in between counts from nothing; one not called at all is left out.
    expect(callsPerOperation(new Map(), servedCalls(metrics(0, 50)), 100)).toBe(
      "SessionsService/GetSessionConfig 0.50, SessionsService/StartSession 0.02",
    );
    expect(callsPerOperation(before, before, 100)).toBe("");
  });
});
