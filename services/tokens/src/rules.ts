import { SessionMode, type SessionRequest } from "@avatar/contracts/common";
import { invalidRequest } from "@avatar/runtime";

/** The message of a token request that asks for transportB (contract section 7). */
export const TRANSPORT_B_UNAVAILABLE = "transportB is not available in this deployment";

/**
 * The rules that need nothing but the request (interface.md rule 5, contract section 4), the choice
 * the interface leaves open for LITE objects (one agent or realtime configuration at most), and the
 * transports this deployment has (contract section 7: no transportB).
 */
export function checkRequestRules(request: SessionRequest): void {
  if (request.mode !== SessionMode.FULL && request.mode !== SessionMode.LITE) {
    throw invalidRequest("mode must be FULL or LITE", { field: "mode" });
  }
  if (request.mode === SessionMode.FULL) {
    if (request.avatarPersona && request.voiceAgent) {
      throw invalidRequest("avatar_persona and voice_agent are mutually exclusive; send one of them", {
        field: "voice_agent",
      });
    }
    if (request.dynamicVariables && request.voiceAgent?.dynamicVariables) {
      throw invalidRequest(
        "dynamic_variables and voice_agent.dynamic_variables cannot both be set; send one of them",
        { field: "dynamic_variables" },
      );
    }
  }
  const lite = request.lite;
  if (request.mode === SessionMode.LITE && lite) {
    const agents = [
      lite.vendorAAgent && "vendorA_agent_config",
      lite.vendorDAgent && "vendorD_agent_config",
      lite.vendorBRealtime && "vendorB_realtime_config",
      lite.vendorCRealtime && "vendorC_realtime_config",
    ].filter((name): name is string => Boolean(name));
    if (agents.length > 1) {
      throw invalidRequest(`only one agent configuration may be set per session; got ${agents.join(", ")}`, {
        field: agents[1] ?? "",
      });
    }
  }
  // Contract section 7: this deployment has no transportB SDK, so it never pretends to publish there.
  if (request.lite?.transportB) {
    throw invalidRequest(`transportB_config: ${TRANSPORT_B_UNAVAILABLE}`, { field: "transportB_config" });
  }
}
