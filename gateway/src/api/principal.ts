import type { Principal } from "../http/route.js";

/** The space the caller acts for; anonymous callers have none (public reads only). */
export function spaceOf(principal: Principal): string {
  return principal.kind === "anonymous" ? "" : principal.spaceId;
}
