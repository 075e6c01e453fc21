import {
  AgentType,
  InteractivityType,
  SessionMode,
  VideoEncoding,
  VideoQuality,
} from "@avatar/contracts/common";

/** Proto enum values as the public API spells them (token claims, messages). */

export const modeName = (m: SessionMode): "FULL" | "LITE" => (m === SessionMode.LITE ? "LITE" : "FULL");

export const qualityName = (q: VideoQuality): string =>
  ({
    [VideoQuality.VERY_HIGH]: "very_high",
    [VideoQuality.HIGH]: "high",
    [VideoQuality.MEDIUM]: "medium",
    [VideoQuality.LOW]: "low",
    [VideoQuality.UNSPECIFIED]: "high",
  })[q];

export const encodingName = (e: VideoEncoding): string => (e === VideoEncoding.VP8 ? "VP8" : "H264");

export const interactivityName = (i: InteractivityType): string =>
  i === InteractivityType.PUSH_TO_TALK ? "PUSH_TO_TALK" : "CONVERSATIONAL";

export const agentTypeName = (t: AgentType): string | null =>
  ({
    [AgentType.MANAGED_AGENT]: "managed_agent",
    [AgentType.VENDOR_A_AGENT]: "vendorA_agent",
    [AgentType.VENDOR_D_AGENT]: "vendorD_agent",
    [AgentType.VENDOR_B_AGENT]: "vendorB_agent",
    [AgentType.UNSPECIFIED]: null,
  })[t];
