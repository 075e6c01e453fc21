import { Tier } from "@avatar/contracts/tokens";

/** The tiers by the names operators type. */
export const tierNames = ["free", "starter", "pro", "scale"] as const;
export type TierName = (typeof tierNames)[number];

const byName: Record<TierName, Tier> = {
  free: Tier.FREE,
  starter: Tier.STARTER,
  pro: Tier.PRO,
  scale: Tier.SCALE,
};

export function tierFromName(name: string): Tier | undefined {
  return (tierNames as readonly string[]).includes(name) ? byName[name as TierName] : undefined;
}

export function tierName(tier: Tier): string {
  return tierNames.find((n) => byName[n] === tier) ?? "unspecified";
}
