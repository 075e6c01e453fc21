import { CallErrorSchema } from "@avatar/contracts/common";
import { create } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import { callErrorOf, connectErrorOf } from "../src/call-errors.js";
import { errorDetailOf, notFound, validationFailed } from "../src/errors.js";
import { createLogger } from "../src/log.js";

/** A batch item's error travels as a CallError and comes back as the ConnectError a call would give. */

function recordingLog() {
  const lines: Record<string, unknown>[] = [];
  return { log: createLogger({ sink: (l) => lines.push(JSON.parse(l)) }), lines };
}

describe("call errors", () => {
  it("carries a domain error's code, message and detail through", () => {
    const { log } = recordingLog();
    const original = notFound("Avatar not found", { field: "avatar_id", reason: "GONE" });
    const back = connectErrorOf(callErrorOf(original, log, "/p/Q"));
    expect(back.code).toBe(Code.NotFound);
    expect(back.rawMessage).toBe("Avatar not found");
    expect(errorDetailOf(back)).toMatchObject({ field: "avatar_id", reason: "GONE" });
  });

  it("keeps the public 422 entries of a validation failure", () => {
    const { log } = recordingLog();
    const original = validationFailed([
      { loc: ["body", "mode"], msg: "Input should be 'FULL'", type: "enum" },
    ]);
    const back = connectErrorOf(callErrorOf(original, log, "/p/Q"));
    expect(back.code).toBe(Code.InvalidArgument);
    expect(errorDetailOf(back)?.issues.map((i) => i.msg)).toEqual(["Input should be 'FULL'"]);
  });

  it("masks an unexpected failure as a bare internal error and logs it", () => {
    const { log, lines } = recordingLog();
    const e = callErrorOf(new TypeError("x is undefined"), log, "/p/Q");
    expect(e).toMatchObject({ code: Code.Internal, message: "internal error" });
    expect(e.detail).toBeUndefined();
    expect(lines.map((l) => [l.level, l.procedure])).toEqual([["error", "/p/Q"]]);
  });

  it("answers an error without detail with no detail, and a code it does not know as Unknown", () => {
    const plain = connectErrorOf(
      callErrorOf(new ConnectError("busy", Code.Unavailable), recordingLog().log, "/p/Q"),
    );
    expect(plain.code).toBe(Code.Unavailable);
    expect(plain.details).toEqual([]);
    expect(connectErrorOf(create(CallErrorSchema, { code: 99, message: "?" })).code).toBe(Code.Unknown);
    expect(connectErrorOf(create(CallErrorSchema, { code: 0, message: "?" })).code).toBe(Code.Unknown);
  });
});
