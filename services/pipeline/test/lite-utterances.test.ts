import { describe, expect, it } from "vitest";
import { AgentState } from "../src/lite/agent-state.js";
import { type Source, UtteranceQueue } from "../src/lite/utterances.js";
import { ManualClock } from "./manual-clock.js";
import { RecordingOutput } from "./recording-output.js";

/** `ms` of 24 kHz 16-bit PCM. */
const pcm = (ms: number) => new Uint8Array(ms * 48);

/** The queue with its events written down as "<ms since start> <event> <utterance>". */
function rig() {
  const clock = new ManualClock();
  const t0 = clock.now();
  const log: string[] = [];
  const at = () => clock.now() - t0;
  const output = new RecordingOutput(at);
  const queue = new UtteranceQueue(
    clock,
    {
      started: (u) => log.push(`${at()} started ${u.id}`),
      ended: (u) => log.push(`${at()} ended ${u.id}`),
      interrupted: (u) => log.push(`${at()} interrupted ${u.id}`),
      talking: (on) => log.push(`${at()} talking ${on}`),
    },
    output,
  );
  const chunk = (id: string, ms: number, source: Source = "client") =>
    queue.append(source, pcm(ms), () => id);
  return { clock, log, queue, chunk, output };
}

describe("UtteranceQueue", () => {
  it("gives the avatar's media each utterance's audio when it plays, in order", () => {
    const { clock, queue, chunk, output } = rig();
    chunk("u1", 400);
    chunk("agent", 200, "agent"); // queued behind u1: not played yet
    expect(output.kinds).toEqual(["speak:19200"]);
    chunk("u1", 100);
    queue.commit("client");
    queue.commit("agent");
    expect(output.kinds).toEqual(["speak:19200", "speak:4800", "end"]);
    clock.advance(500); // u1 has played: the agent's utterance starts with what it had buffered
    expect(output.kinds.slice(3)).toEqual(["speak:9600", "end"]);
    expect(output.calls.at(-1)?.at).toBe(500);
  });

  it("silences the avatar's media on clear, and not when nothing plays", () => {
    const { queue, chunk, output } = rig();
    queue.clear();
    expect(output.kinds).toEqual([]);
    chunk("u1", 300);
    queue.clear();
    expect(output.kinds).toEqual(["speak:14400", "interrupt"]);
  });

  it("starts an utterance with its first chunk and ends it once its audio has played after speak_end", () => {
    const { clock, log, queue, chunk } = rig();
    chunk("u1", 1000);
    expect(log).toEqual(["0 started u1", "0 talking true"]);
    clock.advance(1000);
    chunk("ignored", 1000);
    clock.advance(500);
    queue.commit("client");
    clock.advance(499);
    expect(log).toHaveLength(2);
    clock.advance(1);
    expect(log).toEqual(["0 started u1", "0 talking true", "2000 ended u1", "2000 talking false"]);
  });

  it("names the utterance after its first chunk, whatever the later chunks say", () => {
    const { queue, chunk } = rig();
    const first = chunk("first", 100);
    const second = queue.append("client", pcm(100), () => "second");
    expect(second).toBe(first);
    expect(first.id).toBe("first");
  });

  it("stalls on an underrun and ends when the late audio has played", () => {
    const { clock, log, queue, chunk } = rig();
    chunk("u1", 500);
    clock.advance(2000);
    chunk("u1", 500);
    queue.commit("client");
    clock.advance(500);
    expect(log.slice(2)).toEqual(["2500 ended u1", "2500 talking false"]);
  });

  it("ends at once when speak_end comes after the audio has played", () => {
    const { clock, log, queue, chunk } = rig();
    chunk("u1", 300);
    clock.advance(1000);
    queue.commit("client");
    clock.advance(0);
    expect(log.slice(2)).toEqual(["1000 ended u1", "1000 talking false"]);
  });

  it("plays the next utterance right after the previous one, gapless, without flickering the state", () => {
    const { clock, log, queue, chunk } = rig();
    chunk("u1", 1000);
    queue.commit("client");
    clock.advance(200);
    chunk("u2", 1000);
    queue.commit("client");
    expect(log).toEqual(["0 started u1", "0 talking true"]);
    clock.advance(800);
    expect(log.slice(2)).toEqual(["1000 ended u1", "1000 started u2"]);
    clock.advance(1000);
    expect(log.slice(4)).toEqual(["2000 ended u2", "2000 talking false"]);
  });

  it("interrupts the playing utterance and drops what was queued", () => {
    const { clock, log, queue, chunk } = rig();
    chunk("u1", 2000);
    queue.commit("client");
    chunk("u2", 1000);
    clock.advance(700);
    const stopped = queue.clear();
    expect(stopped.map((u) => u.id)).toEqual(["u1"]);
    expect(log.slice(2)).toEqual(["700 interrupted u1", "700 talking false"]);
    clock.advance(5000);
    expect(log).toHaveLength(4);
    expect(clock.pending).toBe(0);
    // Chunks after an interrupt open a new utterance.
    chunk("u3", 100);
    expect(log.at(-2)).toBe("5700 started u3");
  });

  it("keeps the client's and the agent's utterances apart and plays them in turn", () => {
    const { clock, log, queue, chunk } = rig();
    chunk("agent-1", 500, "agent");
    chunk("client-1", 500, "client");
    queue.commit("client");
    clock.advance(1000);
    expect(log).toEqual(["0 started agent-1", "0 talking true"]);
    queue.commit("agent");
    clock.advance(0);
    expect(log.slice(2)).toEqual(["1000 ended agent-1", "1000 started client-1"]);
    clock.advance(500);
    expect(log.slice(4)).toEqual(["1500 ended client-1", "1500 talking false"]);
  });

  it("commits nothing when no utterance is open", () => {
    const { queue, log } = rig();
    expect(queue.commit("client")).toBeUndefined();
    expect(log).toEqual([]);
  });
});

describe("AgentState", () => {
  it("reports every change once: talking wins over listening, idle otherwise", () => {
    const changes: string[] = [];
    const state = new AgentState((s, prev) => changes.push(`${prev}->${s}`));
    state.setListening(true);
    state.setListening(true);
    state.setTalking(true);
    state.setListening(false);
    state.setTalking(false);
    state.setTalking(false);
    expect(changes).toEqual(["idle->listening", "listening->talking", "talking->idle"]);
  });
});
