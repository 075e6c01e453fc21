import { randomUUID } from "node:crypto";
import { EventEmitter } from "node:events";
import { type Bus, createMemoryBus } from "@avatar/bus";
import { ClientFrameSchema, ConnectionKind, ServerFrameSchema } from "@avatar/contracts/pipeline";
import { realtimeSubjects, silentLogger, TurnPublisher, wsMessagesResent } from "@avatar/runtime";
import { nextTurn, waitFor } from "@avatar/testkit";
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { afterEach, describe, expect, it } from "vitest";
import type { WebSocket } from "ws";
import { ClientSocket } from "../src/ws/client-socket.js";
import type { Corkable } from "../src/ws/turn-writes.js";

const HEARTBEAT_MS = 20;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** What ClientSocket uses of a `ws` socket: an open one whose client reads everything. */
class FakeSocket extends EventEmitter {
  readonly OPEN = 1;
  readyState = 1;
  bufferedAmount = 0;
  readonly sent: string[] = [];
  send(text: string) {
    this.sent.push(text);
  }
  ping() {}
  terminate() {}
  close() {
    this.readyState = 3;
    this.emit("close");
  }
}

/** avatar_ws_messages_resent_total by reason, as now. */
async function resentCounts(): Promise<Record<string, number>> {
  const { values } = await wsMessagesResent.get();
  return Object.fromEntries(values.map((v) => [String(v.labels.reason), v.value]));
}

/** How much each reason counted since `before`. */
async function resentSince(before: Record<string, number>): Promise<Record<string, number>> {
  const now = await resentCounts();
  return Object.fromEntries(
    Object.entries(now)
      .map(([reason, n]) => [reason, n - (before[reason] ?? 0)] as const)
      .filter(([, n]) => n > 0),
  );
}

const buses: Bus[] = [];
afterEach(async () => {
  for (const bus of buses.splice(0)) await bus.close();
});
const newBus = () => {
  const bus = createMemoryBus();
  buses.push(bus);
  return bus;
};

/**
 * A started ClientSocket of a new session, and a worker that is behind: it takes every frame (and
 * answers the socket's OPENED) but acknowledges nothing itself; `sent` counts the copies of each message.
 */
async function relayedSocket(
  options: { bus?: Bus; publisher?: TurnPublisher; sessionId?: string; transport?: Corkable } = {},
) {
  const bus = options.bus ?? newBus();
  const sessionId = options.sessionId ?? randomUUID();
  const sent = new Map<number, number>();
  const heartbeats: number[] = [];
  bus.serve(realtimeSubjects.clientFrames(sessionId), (msg) => {
    const frame = fromBinary(ClientFrameSchema, msg.data);
    if (frame.json) sent.set(Number(frame.seq), (sent.get(Number(frame.seq)) ?? 0) + 1);
    if (frame.connection === ConnectionKind.HEARTBEAT) heartbeats.push(Number(frame.seq));
    return new Uint8Array();
  });
  const ws = new FakeSocket();
  const client = new ClientSocket(ws as unknown as WebSocket, sessionId, {
    bus,
    log: silentLogger,
    heartbeatMs: HEARTBEAT_MS,
    openTimeoutMs: 2_000,
    pingMs: 60_000,
    resendLimits: { maxBytes: 1_000_000, maxCount: 100 },
    publisher: options.publisher ?? new TurnPublisher(bus, silentLogger),
    ...(options.transport ? { transport: options.transport } : {}),
  });
  await client.start();
  return { bus, sessionId, sent, heartbeats, ws, client };
}

describe("ClientSocket resends", () => {
  it("sends unacknowledged messages again at a widening interval, not every heartbeat, and stops once acknowledged", async () => {
    const { bus, sessionId, sent, ws, client } = await relayedSocket();
    const before = await resentCounts();
    for (let i = 0; i < 3; i++) ws.emit("message", Buffer.from(`{"type":"m${i}"}`), false);

    await sleep(30 * HEARTBEAT_MS);
    // 30 heartbeats: every one would have resent all three; paced, the window went out a few times.
    const copies = [...sent.values()];
    expect(copies).toHaveLength(3);
    expect(Math.min(...copies)).toBeGreaterThanOrEqual(2);
    expect(Math.max(...copies)).toBeLessThanOrEqual(7);
    // Every copy after the first counts as an overdue resend.
    await waitFor("the last resend to reach the worker", async () => {
      const counted = (await resentSince(before)).overdue ?? 0;
      return counted === [...sent.values()].reduce((a, n) => a + n - 1, 0);
    });
    expect(Object.keys(await resentSince(before))).toEqual(["overdue"]);

    bus.publish(
      realtimeSubjects.serverFrames(sessionId),
      toBinary(
        ServerFrameSchema,
        create(ServerFrameSchema, { connectionId: client.connectionId, ackSeq: 3n }),
      ),
    );
    await sleep(2 * HEARTBEAT_MS);
    const acknowledged = [...sent.values()];
    await sleep(20 * HEARTBEAT_MS);
    expect([...sent.values()]).toEqual(acknowledged);
    ws.close();
  });

  it("sends what follows the worker's acknowledgement again when the worker asks (it found a gap), counted as asked", async () => {
    const { bus, sessionId, sent, ws, client } = await relayedSocket();
    const before = await resentCounts();
    for (let i = 0; i < 3; i++) ws.emit("message", Buffer.from(`{"type":"m${i}"}`), false);
    await waitFor("the three messages to reach the worker", () => sent.size === 3);
    bus.publish(
      realtimeSubjects.serverFrames(sessionId),
      toBinary(
        ServerFrameSchema,
        create(ServerFrameSchema, { connectionId: client.connectionId, ackSeq: 1n, resend: true }),
      ),
    );
    await waitFor("the two after the acknowledged one to come again", () => sent.get(3) === 2);
    expect([...sent.entries()]).toEqual([
      [1, 1],
      [2, 2],
      [3, 2],
    ]);
    expect(await resentSince(before)).toEqual({ asked: 2 });
    ws.close();
  });

  it("takes the acknowledgements that travel with an event, whichever connection the event is for", async () => {
    const { bus, sessionId, sent, ws, client } = await relayedSocket();
    for (let i = 0; i < 2; i++) ws.emit("message", Buffer.from(`{"type":"m${i}"}`), false);
    // An event for another connection of the session, acknowledging both of this one's messages.
    bus.publish(
      realtimeSubjects.serverFrames(sessionId),
      toBinary(
        ServerFrameSchema,
        create(ServerFrameSchema, {
          connectionId: "someone-else",
          json: '{"type":"x"}',
          acks: [
            { connectionId: "someone-else", seq: 9n },
            { connectionId: client.connectionId, seq: 2n },
          ],
        }),
      ),
    );
    await sleep(20 * HEARTBEAT_MS);
    // Each went out once and never again; the other connection's event did not reach this client.
    expect([...sent.values()]).toEqual([1, 1]);
    expect(ws.sent).toEqual([]);
    ws.close();
  });
});

/** `bus`, with some of its answers replaced (how much it carries, what it holds unsent). */
function overriding(bus: Bus, answers: Partial<Pick<Bus, "maxPayload" | "unsentBytes">>): Bus {
  return new Proxy(bus, {
    get: (target, key) => {
      if (key in answers) return answers[key as keyof typeof answers];
      const value = Reflect.get(target, key);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}

describe("ClientSocket relaying", () => {
  it("hands the messages every socket read in one turn to the bus together, after the turn", async () => {
    const bus = newBus();
    const published: string[] = [];
    const publisher = new TurnPublisher(
      {
        status: () => bus.status(),
        maxPayload: () => bus.maxPayload(),
        unsentBytes: () => bus.unsentBytes(),
        publish: (subject, data) => {
          published.push(subject);
          bus.publish(subject, data);
        },
      },
      silentLogger,
    );
    const a = await relayedSocket({ bus, publisher });
    const b = await relayedSocket({ bus, publisher });
    a.ws.emit("message", Buffer.from('{"type":"a"}'), false);
    b.ws.emit("message", Buffer.from('{"type":"b"}'), false);
    expect(published).toEqual([]);
    await nextTurn();
    expect(published).toEqual([
      realtimeSubjects.clientFrames(a.sessionId),
      realtimeSubjects.clientFrames(b.sessionId),
    ]);
    await waitFor("both workers to get their message", () => a.sent.size + b.sent.size === 2);
    expect([...a.sent.entries(), ...b.sent.entries()]).toEqual([
      [1, 1],
      [1, 1],
    ]);
    a.ws.close();
    b.ws.close();
  });

  it("refuses at once a message the bus cannot carry: the client is told, and the next takes its number", async () => {
    const { sent, ws } = await relayedSocket({ bus: overriding(newBus(), { maxPayload: () => 400 }) });
    ws.emit("message", Buffer.from(`{"type":"big","text":"${"x".repeat(500)}"}`), false);
    expect(ws.sent.map((text) => JSON.parse(text).error?.type)).toEqual(["message_not_relayed"]);
    ws.emit("message", Buffer.from('{"type":"small"}'), false);
    await waitFor("the worker to get the small message", () => sent.size > 0);
    expect([...sent.entries()]).toEqual([[1, 1]]);
    ws.close();
  });

  it("keeps a message a backlogged bus holds back, and those after it, tells the client nothing, lets heartbeats through, and sends them in order once the bus is down to half its bound", async () => {
    // A bus whose connection holds `backlog.bytes` unsent, and a publisher bounded at 100 kB.
    const backlog = { bytes: 0 };
    const bus = overriding(newBus(), { unsentBytes: () => backlog.bytes });
    const publisher = new TurnPublisher(bus, silentLogger, { maxUnsentBytes: 100_000 });
    const { sent, heartbeats, ws } = await relayedSocket({ bus, publisher });
    const before = await resentCounts();
    const message = (type: string) => Buffer.from(JSON.stringify({ type, text: "x".repeat(300) }));
    backlog.bytes = 150_000;
    ws.emit("message", message("held"), false);
    await sleep(5 * HEARTBEAT_MS);
    expect(sent.size).toBe(0);
    expect(ws.sent).toEqual([]);
    // A heartbeat names the last message sent, so the worker does not ask for the held one.
    expect(heartbeats.length).toBeGreaterThan(0);
    expect(new Set(heartbeats)).toEqual(new Set([0]));
    // Under the bound but above half of it: the backlog lasts.
    backlog.bytes = 60_000;
    ws.emit("message", message("still held"), false);
    await sleep(3 * HEARTBEAT_MS);
    expect(sent.size).toBe(0);
    backlog.bytes = 0;
    ws.emit("message", message("after"), false);
    // The one after it waited with it: the worker takes messages only in order.
    await waitFor("the three messages to reach the worker", () => sent.size === 3);
    expect([...sent.keys()]).toEqual([1, 2, 3]);
    expect(ws.sent).toEqual([]);
    expect(await resentSince(before)).toEqual({ held: 3 });
    ws.close();
  });

  it("sends the client its events with its socket held, and lets go after the turn", async () => {
    let depth = 0;
    const transport = { cork: () => depth++, uncork: () => depth-- };
    const { bus, sessionId, ws, client } = await relayedSocket({ transport });
    const heldWhenSent: boolean[] = [];
    const send = ws.send.bind(ws);
    ws.send = (text: string) => {
      heldWhenSent.push(depth > 0);
      send(text);
    };
    for (const n of [1, 2]) {
      const event = create(ServerFrameSchema, {
        connectionId: client.connectionId,
        json: `{"type":"e${n}"}`,
      });
      bus.publish(realtimeSubjects.serverFrames(sessionId), toBinary(ServerFrameSchema, event));
    }
    await waitFor("both events to reach the client", () => ws.sent.length === 2);
    await nextTurn();
    expect(ws.sent).toEqual(['{"type":"e1"}', '{"type":"e2"}']);
    expect(heldWhenSent).toEqual([true, true]);
    expect(depth).toBe(0);
    ws.close();
  });

  it("refuses at once a message once the bus has closed: the client is told", async () => {
    const { bus, ws } = await relayedSocket();
    await bus.close();
    ws.emit("message", Buffer.from('{"type":"late"}'), false);
    expect(ws.sent.map((text) => JSON.parse(text).error?.type)).toEqual(["message_not_relayed"]);
    ws.close();
  });
});
