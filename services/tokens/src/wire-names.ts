import { AgentType, InteractivityType, SessionMode } from "@avatar/contracts/common";

export { codecName as encodingName, qualityName } from "@avatar/media/video-settings";

/** Proto enum values as the public API spells them (token claims, messages). */

export const modeName = (m: SessionMode): "FULL" | "LITE" => (m === SessionMode.LITE ? "LITE" : "FULL");

export const interactivityName = (i: InteractivityType): string =>
  i === InteractivityType.PUSH_TO_TALK ? "PUSH_TO_TALK" : "CONVERSATIONAL";

const AGENT_TYPE_NAMES: Record<AgentType, string | null> = {
  [AgentType.MANAGED_AGENT]: "managed_agent",
  [AgentType.VENDOR_A_AGENT]: "vendorA_agent",
  [AgentType.VENDOR_D_AGENT]: "vendorD_agent",
  [AgentType.VENDOR_B_AGENT]: "vendorB_agent",
  [AgentType.UNSPECIFIED]: null,
};

export const agentTypeName = (t: AgentType): string | null => AGENT_TYPE_NAMES[t] ?? null;
