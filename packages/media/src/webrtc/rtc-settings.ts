import { env, readConfig } from "@avatar/runtime";

/**
 * The deployment's WebRTC settings, from the environment:
 * - WEBRTC_UDP_PORT_MIN / WEBRTC_UDP_PORT_MAX: the UDP ports peers may use (both or neither; default any).
 * - WEBRTC_BIND_ADDRESS: the local address peers bind (default all).
 * - WEBRTC_PUBLIC_IP: the address viewers reach this worker at, written into the answer's host
 *   candidates instead of the local one (a 1:1 NAT, a pod's host port).
 * - WEBRTC_ICE_SERVERS: comma-separated STUN/TURN URLs (`stun:host:3478`, `turn:user:pass@host:3478`).
 */
export interface RtcSettings {
  portRange?: { min: number; max: number };
  bindAddress?: string;
  publicIp?: string;
  iceServers: string[];
}

const spec = {
  WEBRTC_UDP_PORT_MIN: env.int({ default: 0, min: 0, max: 65535 }),
  WEBRTC_UDP_PORT_MAX: env.int({ default: 0, min: 0, max: 65535 }),
  WEBRTC_BIND_ADDRESS: env.optionalString(),
  WEBRTC_PUBLIC_IP: env.optionalString(),
  WEBRTC_ICE_SERVERS: env.optionalString(),
};

const ICE_URL = /^(stun|stuns|turn|turns):/;

export function readRtcSettings(source: Record<string, string | undefined> = process.env): RtcSettings {
  const c = readConfig(spec, source);
  const problems: string[] = [];
  const { WEBRTC_UDP_PORT_MIN: min, WEBRTC_UDP_PORT_MAX: max } = c;
  if ((min === 0) !== (max === 0) || min > max) {
    problems.push("WEBRTC_UDP_PORT_MIN and WEBRTC_UDP_PORT_MAX must be set together, MIN <= MAX");
  }
  const iceServers = (c.WEBRTC_ICE_SERVERS ?? "")
    .split(",")
    .map((s) => s.trim())
    .filter((s) => s !== "");
  for (const url of iceServers) {
    if (!ICE_URL.test(url))
      problems.push(`WEBRTC_ICE_SERVERS: ${JSON.stringify(url)} is not a stun: or turn: URL`);
  }
  if (problems.length > 0) throw new Error(`invalid configuration:\n  ${problems.join("\n  ")}`);
  return {
    ...(min > 0 ? { portRange: { min, max } } : {}),
    ...(c.WEBRTC_BIND_ADDRESS ? { bindAddress: c.WEBRTC_BIND_ADDRESS } : {}),
    ...(c.WEBRTC_PUBLIC_IP ? { publicIp: c.WEBRTC_PUBLIC_IP } : {}),
    iceServers,
  };
}

/** Host candidates of an answer rewritten to advertise `publicIp` (IPv4 candidates only). */
export function advertisePublicIp(sdp: string, publicIp: string | undefined): string {
  if (!publicIp) return sdp;
  const seen = new Set<string>();
  return sdp
    .split("\r\n")
    .map((line) => {
      const m = /^(a=candidate:\S+ \d+ \S+ \d+ )(\d+\.\d+\.\d+\.\d+)( \d+ typ host.*)$/.exec(line);
      return m ? `${m[1]}${publicIp}${m[3]}` : line;
    })
    .filter((line) => {
      if (!line.startsWith("a=candidate:")) return true;
      const key = line.split(" ").slice(4, 6).join(" ");
      if (seen.has(key)) return false;
      seen.add(key);
      return true;
    })
    .join("\r\n");
}
