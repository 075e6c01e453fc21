/**
 * node-datachannel (libdatachannel) peers: the one place that creates them, so every peer is counted and
 * its gathering awaited the same way.
 */
import ndc from "node-datachannel";
import type { RtcSettings } from "./rtc-settings.js";

export type PeerConnection = ndc.PeerConnection;

const live = new Set<PeerConnection>();
/** Peers created and not yet closed in this process (tests check nothing leaks). */
export const livePeerConnections = (): number => live.size;

export function createPeerConnection(
  name: string,
  settings: RtcSettings,
  role: "answerer" | "offerer" = "answerer",
): PeerConnection {
  const pc = new ndc.PeerConnection(name, {
    iceServers: settings.iceServers,
    // An answerer answers once its own tracks are set (libdatachannel would answer the offer at once).
    disableAutoNegotiation: role === "answerer",
    ...(settings.bindAddress ? { bindAddress: settings.bindAddress } : {}),
    ...(settings.portRange
      ? { portRangeBegin: settings.portRange.min, portRangeEnd: settings.portRange.max }
      : {}),
  });
  live.add(pc);
  return pc;
}

export function closePeerConnection(pc: PeerConnection): void {
  if (!live.delete(pc)) return;
  try {
    pc.close();
  } catch {
    // already closed natively
  }
}

/** Resolves when ICE gathering is complete (every candidate is in the local description). */
export function gatheringComplete(pc: PeerConnection, timeoutMs: number): Promise<void> {
  return new Promise((resolve, reject) => {
    if (pc.gatheringState() === "complete") return resolve();
    const timer = setTimeout(() => reject(new Error("ICE gathering did not complete")), timeoutMs);
    pc.onGatheringStateChange((state) => {
      if (state === "complete") {
        clearTimeout(timer);
        resolve();
      }
    });
    // It may have completed between the first check and registering the callback.
    if (pc.gatheringState() === "complete") {
      clearTimeout(timer);
      resolve();
    }
  });
}
