import { Tier } from "@avatar/contracts/tokens";
import type { TierValue } from "./schema.js";

/** Session-duration limit of each subscription tier, in seconds. */
export const tierLimits: Record<TierValue, number> = { free: 600, starter: 1800, pro: 3600, scale: 7200 };

const byProto: [Tier, TierValue][] = [
  [Tier.FREE, "free"],
  [Tier.STARTER, "starter"],
  [Tier.PRO, "pro"],
  [Tier.SCALE, "scale"],
];

export const tierFromProto = (t: Tier): TierValue | undefined => byProto.find(([p]) => p === t)?.[1];
export const tierToProto = (t: TierValue): Tier => byProto.find(([, v]) => v === t)?.[0] ?? Tier.UNSPECIFIED;
