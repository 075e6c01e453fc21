import { validationFailed } from "@avatar/runtime";
import type { SpaceRow } from "./schema.js";
import { tierLimits } from "./tiers.js";

/** The space's session-duration limit in seconds: its own setting, else its tier's. */
export const spaceDurationLimit = (space: Pick<SpaceRow, "tier" | "max_session_duration">): number =>
  space.max_session_duration ?? tierLimits[space.tier];

const LOC = ["body", "max_session_duration"];

/**
 * The session's max_session_duration: what was asked (at most the space's limit, else 422 as pydantic
 * words a `le` bound), the limit when nothing was asked; a sandbox session is capped whatever was asked.
 */
export function sessionDuration(
  asked: number | undefined,
  limit: number,
  sandbox: { isSandbox: boolean; maxSeconds: number },
): number {
  if (asked !== undefined && asked > limit) {
    throw validationFailed([
      {
        loc: LOC,
        msg: `Input should be less than or equal to ${limit}`,
        type: "less_than_equal",
        input: asked,
        ctx: { le: limit },
      },
    ]);
  }
  // The gateway's schema refuses these already; other callers of the RPC get the same answer.
  if (asked !== undefined && asked < 1) {
    throw validationFailed([
      {
        loc: LOC,
        msg: "Input should be greater than or equal to 1",
        type: "greater_than_equal",
        input: asked,
        ctx: { ge: 1 },
      },
    ]);
  }
  const seconds = asked ?? limit;
  return sandbox.isSandbox ? Math.min(seconds, sandbox.maxSeconds) : seconds;
}
