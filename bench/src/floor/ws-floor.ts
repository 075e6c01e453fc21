/**
 * The floor of `pnpm bench:lite`, as its own process: a bare `ws` server that answers every message with
 * the acknowledgement the LITE pipeline sends (agent.audio_buffer_appended with the message's event_id).
 * Prints `{"url": ...}` once it listens.
 */
import type { AddressInfo } from "node:net";
import { WebSocketServer } from "ws";

const wss = new WebSocketServer({ host: "127.0.0.1", port: 0, maxPayload: 1_048_576 });
wss.on("connection", (ws) => {
  ws.send(JSON.stringify({ type: "session.state_updated", state: "connected" }));
  ws.on("message", (data) => {
    const event = JSON.parse(data.toString()) as { event_id?: string };
    ws.send(JSON.stringify({ type: "agent.audio_buffer_appended", source_event_id: event.event_id ?? null }));
  });
});
wss.on("listening", () => {
  const { port } = wss.address() as AddressInfo;
  process.stdout.write(`${JSON.stringify({ url: `ws://127.0.0.1:${port}` })}\n`);
});
process.once("SIGTERM", () => {
  for (const ws of wss.clients) ws.terminate();
  wss.close(() => process.exit(0));
});
