import {
  insufficientCredits,
  invalidRequest,
  notFound,
  unavailable,
  validationFailed,
} from "@avatar/runtime";
import { Code, ConnectError } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import { failure, success } from "../src/http/envelope.js";
import { HttpError, toHttpError } from "../src/http/http-error.js";
import { Router } from "../src/http/router.js";

describe("envelope", () => {
  it("wraps success with code 100 and errors with status x 10 and null data", () => {
    expect(success({ a: 1 })).toEqual({ code: 100, data: { a: 1 }, message: "Success" });
    expect(failure(404, "Not Found")).toEqual({ code: 4040, data: null, message: "Not Found" });
    expect(failure(429, "Rate limit exceeded")).toEqual({
      code: 4290,
      data: null,
      message: "Rate limit exceeded",
    });
  });
});

describe("service errors on the public API", () => {
  it.each([
    [invalidRequest("both given"), 400, "both given"],
    [notFound("Avatar not found"), 404, "Avatar not found"],
    [insufficientCredits(), 402, "Insufficient credits"],
    [new ConnectError("nope", Code.PermissionDenied), 403, "nope"],
    [new ConnectError("who", Code.Unauthenticated), 401, "who"],
    [new ConnectError("ended", Code.FailedPrecondition), 409, "ended"],
    [new ConnectError("dup", Code.AlreadyExists), 409, "dup"],
    [new ConnectError("db password is hunter2", Code.Internal), 500, "Internal server error"],
    [new ConnectError("upstream", Code.Unavailable), 503, "Service temporarily unavailable"],
    // A service's own 503 (a domain error) is written for API users: its message is shown.
    [
      unavailable("transportA is unavailable: try again", { reason: "X" }),
      503,
      "transportA is unavailable: try again",
    ],
    [new Error("anything else"), 500, "Internal server error"],
  ])("%s -> %i", (err, status, message) => {
    const e = toHttpError(err);
    expect(e.status).toBe(status);
    expect(e.message).toBe(message);
  });

  it("answers 503 with Retry-After (a service or its database briefly down)", () => {
    for (const code of [Code.Unavailable, Code.DeadlineExceeded, Code.Aborted]) {
      const e = toHttpError(new ConnectError("database unavailable", code));
      expect(e.status).toBe(503);
      expect(e.headers).toEqual({ "Retry-After": "2" });
    }
  });

  it("turns validation issues from a service into a 422 body", () => {
    const e = toHttpError(
      validationFailed([
        {
          loc: ["body", "max_session_duration"],
          msg: "Input should be less than or equal to 600",
          type: "less_than_equal",
          input: 900,
          ctx: { le: 600 },
        },
      ]),
    );
    expect(e.status).toBe(422);
    expect(e.issues).toEqual([
      {
        loc: ["body", "max_session_duration"],
        msg: "Input should be less than or equal to 600",
        type: "less_than_equal",
        input: 900,
        ctx: { le: 600 },
      },
    ]);
  });

  it("passes HttpErrors through", () => {
    const e = new HttpError(413, "Request body too large");
    expect(toHttpError(e)).toBe(e);
  });
});

describe("router", () => {
  const routes = [
    { method: "GET", path: "/v1/avatars/public", id: "public" },
    { method: "GET", path: "/v1/avatars/{avatar_id}", id: "get" },
    { method: "PATCH", path: "/v1/avatars/{avatar_id}", id: "patch" },
    { method: "GET", path: "/v1/sessions/{session_id}/transcript", id: "transcript" },
  ];
  const router = new Router(routes);

  it("matches literal segments before parameters and decodes parameters", () => {
    const pub = router.lookup("GET", "/v1/avatars/public");
    expect(pub.kind === "found" && pub.match.route.id).toBe("public");
    const get = router.lookup("GET", "/v1/avatars/a%20b");
    expect(get).toMatchObject({ kind: "found", match: { params: { avatar_id: "a b" } } });
    expect(router.lookup("GET", "/v1/sessions/x/transcript/")).toMatchObject({
      kind: "found",
      match: { params: { session_id: "x" } },
    });
  });

  it("names a match's rate-limit endpoint by method and pattern, whatever the parameters", () => {
    for (const path of ["/v1/avatars/a", "/v1/avatars/b"]) {
      expect(router.lookup("PATCH", path)).toMatchObject({
        match: { endpoint: "PATCH /v1/avatars/{avatar_id}" },
      });
    }
  });

  it("tells a wrong method from an unknown path", () => {
    expect(router.lookup("DELETE", "/v1/avatars/x")).toEqual({
      kind: "method_not_allowed",
      allow: ["GET", "PATCH"],
    });
    expect(router.lookup("GET", "/v1/avatars/x/y")).toEqual({ kind: "not_found" });
    expect(router.lookup("GET", "/v1/avatars")).toEqual({ kind: "not_found" });
  });

  it("keeps a malformed escape as it came", () => {
    expect(router.lookup("GET", "/v1/avatars/%E0%A4%A")).toMatchObject({
      match: { params: { avatar_id: "%E0%A4%A" } },
    });
  });
});
