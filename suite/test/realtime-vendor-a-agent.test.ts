import { SecretType } from "@avatar/contracts/agents";
import { SessionEndReason, SessionState } from "@avatar/contracts/sessions";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { WsTestServer } from "../../packages/providers/test/servers/realtime-peer-transport.js";
import {
  defaultAgentBehaviour,
  startVendorAAgentServer,
  type VendorAAgentPeer,
} from "../../packages/providers/test/servers/vendor-a-agent-server.js";
import { EventClient, pcmBase64 } from "./realtime-client.js";
import { startedLite } from "./realtime-support.js";
import { eventually, grant } from "./sessions-support.js";
import { startTestSuite, type TestSuite } from "./support.js";

/**
 * A LITE session with a vendorA hosted agent, against a local server that speaks vendorA's agent
 * protocol (the providers package's test peer): the agent's audio plays as agent utterances, its raw
 * events reach the client as vendorA_agent_event, client commands and the microphone reach the agent,
 * a refused connection (429) is a warning, and the agent hanging up ends the session with AGENT_HANG_UP.
 */

const VENDOR_KEY = "xi-test-key-0123456789";
let server: WsTestServer<VendorAAgentPeer>;
let suite: TestSuite;
let secretId: string;

beforeAll(async () => {
  server = await startVendorAAgentServer(VENDOR_KEY, defaultAgentBehaviour());
  suite = await startTestSuite({
    env: { PROVIDER_VENDORA_URL: new URL(server.url).origin.replace("ws:", "http:") },
  });
  await grant(suite, "1000");
  const created = await suite.clients.agents.createSecret({
    spaceId: suite.spaceId,
    secretName: "vendorA key",
    secretValue: VENDOR_KEY,
    secretType: SecretType.VENDORA_API_KEY,
  });
  secretId = created.secret?.id ?? "";
});
afterAll(async () => {
  await suite?.stop();
  await server?.close();
});

const agentSession = () =>
  startedLite(suite, { vendorA_agent_config: { secret_id: secretId, agent_id: "agent-42" } });

/** `ms` of the agent's output format (pcm_16000). */
const agentPcm = (ms: number) => new Uint8Array(Buffer.alloc(ms * 32, 3));

describe("a LITE session with a vendorA agent", () => {
  it("plays the agent, forwards its events, passes commands and audio through, and ends on its hang-up", async () => {
    const session = await agentSession();
    const client = await EventClient.connect(session.ws_url);
    await client.next("session.state_updated", (e) => e.state === "connected");
    const peer = await server.nextPeer();
    expect(peer.url.searchParams.get("agent_id")).toBe("agent-42");
    await client.next(
      "vendorA_agent_event",
      (e) => e.vendorA_event_type === "conversation_initiation_metadata",
    );

    peer.sendAudio(agentPcm(400), 1);
    // The raw event first, then what the audio does to the avatar.
    const audioEvent = await client.next("vendorA_agent_event", (e) => e.vendorA_event_type === "audio");
    expect(audioEvent.data).toMatchObject({ type: "audio", audio_event: { event_id: 1 } });
    const started = await client.next("agent.speak_started");
    await client.next("agent.state_updated", (e) => e.state === "talking");
    const ended = await client.next(
      "agent.speak_ended",
      (e) => e.source_event_id === started.source_event_id,
    );
    expect(ended.receivedAt - started.receivedAt).toBeGreaterThanOrEqual(350);

    client.send({
      type: "vendorA_agent_command",
      vendorA_event_type: "user_message",
      data: { text: "hello" },
    });
    await peer.received.waitFor((f) => f.kind === "json" && f.message.type === "user_message");
    expect(peer.messages.find((m) => m.type === "user_message")).toEqual({
      type: "user_message",
      text: "hello",
    });

    client.send({ type: "user.audio", audio: pcmBase64(100) });
    await eventually(async () => expect(peer.userAudio.length).toBeGreaterThan(0), 5_000);
    expect(peer.violations).toEqual([]);

    peer.endCall();
    const stopped = await client.next("session.stopped");
    expect(stopped.end_reason).toBe("AGENT_HANG_UP");
    expect((await client.closed).code).toBe(1000);
    const { session: s } = await suite.clients.sessions.getSession({
      spaceId: suite.spaceId,
      sessionId: session.session_id,
    });
    expect(s).toMatchObject({ state: SessionState.ENDED, endReason: SessionEndReason.AGENT_HANG_UP });
  });

  it("reports an agent that refuses with 429 as a warning, and the session keeps running", async () => {
    server.refuseNext({
      status: 429,
      headers: { "retry-after": "1" },
      body: { detail: "Too many requests" },
    });
    const session = await agentSession();
    const client = await EventClient.connect(session.ws_url);
    const warning = await client.next("warning");
    expect(warning.warning.type).toBe("provider_rate_limited");
    client.send({ type: "agent.speak_end", event_id: "own-audio", audio: pcmBase64(50) });
    await client.next("agent.speak_ended", (e) => e.source_event_id === "own-audio");
    await client.close();
  });
});
