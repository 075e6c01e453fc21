import { SessionEndReason } from "@avatar/contracts/sessions";
import { describe, expect, it } from "vitest";
import { END_REASONS, endReasonFromProto, endReasonToProto } from "../src/end-reasons.js";

describe("end reason wire names", () => {
  it("name every proto end reason but UNSPECIFIED, in the proto's order", () => {
    const protoNames = Object.keys(SessionEndReason).filter(
      (k) => Number.isNaN(Number(k)) && k !== "UNSPECIFIED",
    );
    expect([...END_REASONS]).toEqual(protoNames);
  });

  it("round-trip through the proto enum", () => {
    for (const name of END_REASONS) expect(endReasonFromProto(endReasonToProto(name))).toBe(name);
  });

  it("have no name for UNSPECIFIED or a number this build does not know", () => {
    expect(endReasonFromProto(SessionEndReason.UNSPECIFIED)).toBeUndefined();
    expect(endReasonFromProto(99 as SessionEndReason)).toBeUndefined();
  });
});
