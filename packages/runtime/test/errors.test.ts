import { Code, ConnectError } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import {
  conflict,
  errorDetailOf,
  forbidden,
  insufficientCredits,
  invalidRequest,
  issueToJson,
  notFound,
  unauthenticated,
  validationFailed,
} from "../src/errors.js";

describe("domain errors", () => {
  it("carry their Connect code, message and ErrorDetail", () => {
    const cases: [ConnectError, Code, string, { reason: string; field: string }][] = [
      [invalidRequest("bad", { field: "name" }), Code.InvalidArgument, "bad", { reason: "", field: "name" }],
      [notFound("gone", { field: "id" }), Code.NotFound, "gone", { reason: "", field: "id" }],
      [
        conflict("busy", { reason: "ENDED" }),
        Code.FailedPrecondition,
        "busy",
        { reason: "ENDED", field: "" },
      ],
      [unauthenticated(), Code.Unauthenticated, "Not authenticated", { reason: "", field: "" }],
      [forbidden("no"), Code.PermissionDenied, "no", { reason: "", field: "" }],
      [
        insufficientCredits(),
        Code.ResourceExhausted,
        "Insufficient credits",
        { reason: "INSUFFICIENT_CREDITS", field: "" },
      ],
    ];
    for (const [err, code, message, detail] of cases) {
      expect(err.code).toBe(code);
      expect(err.rawMessage).toBe(message);
      expect(errorDetailOf(err)).toMatchObject({ ...detail, issues: [] });
    }
  });

  it("errorDetailOf is undefined for an error without detail", () => {
    expect(errorDetailOf(new ConnectError("plain", Code.Internal))).toBeUndefined();
  });
});

describe("validationFailed", () => {
  it("keeps the public validation entries, with an absent input as null and ctx only when given", () => {
    const err = validationFailed([
      { loc: ["body", "items", 2, "name"], msg: "Field required", type: "missing" },
      {
        loc: ["body", "size"],
        msg: "Input should be less than 10",
        type: "less_than",
        input: 12,
        ctx: { lt: 10 },
      },
    ]);
    expect(err.code).toBe(Code.InvalidArgument);
    expect(err.rawMessage).toBe("Field required");
    const detail = errorDetailOf(err);
    expect(detail?.reason).toBe("VALIDATION_FAILED");
    expect(detail?.issues.map(issueToJson)).toStrictEqual([
      { loc: ["body", "items", 2, "name"], msg: "Field required", type: "missing", input: null },
      {
        loc: ["body", "size"],
        msg: "Input should be less than 10",
        type: "less_than",
        input: 12,
        ctx: { lt: 10 },
      },
    ]);
  });
});
