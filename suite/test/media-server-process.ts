/**
 * The server of the browser media tests, in a process of its own (`MediaServer`, media-server.ts, starts
 * it): the suite whose media the browser judges does not share its event loop with the test's browser
 * driver (Playwright's client), the test runner and its assertions, as a deployment's does not share it
 * with its viewers. It answers the test's questions over Node's IPC channel. Nothing here imports
 * vitest, which cannot be imported outside its runner.
 *
 * Environment: DATABASE_URL (the test's database; the test drops it), LOCAL_LLM_URL.
 */
import { liveEncoderPids, PortraitRenderer, systemClock } from "@avatar/media";
import { cpuMsOf } from "@avatar/testkit";
import { grant, startTestSuiteOn } from "./support.js";

/** A stretch of more than 100 ms in which the server's event loop stood still (see `watchStalls`). */
export interface Stall {
  atMs: number;
  ms: number;
  cpuMs: number;
}

/** What the test may ask, and what each question is answered with. */
export type Question =
  | { op: "mouthBox"; avatarId: string }
  | { op: "watchStalls" }
  | { op: "stalls" }
  | { op: "encoders" }
  | { op: "killEncoders" };
export interface Answers {
  mouthBox: ReturnType<PortraitRenderer["mouthBox"]>;
  watchStalls: null;
  stalls: Stall[];
  encoders: number[];
  killEncoders: number[];
}
export interface Ready {
  ready: { gatewayUrl: string; apiKey: string };
}

async function serve(send: (message: unknown) => void): Promise<void> {
  const url = process.env.DATABASE_URL;
  if (!url) throw new Error("DATABASE_URL is not set");
  const llm = process.env.LOCAL_LLM_URL;
  const suite = await startTestSuiteOn(
    { url, drop: async () => {} },
    { env: llm ? { LOCAL_LLM_URL: llm } : {} },
  );
  await grant(suite, "100");
  let watch: (() => Stall[]) | undefined;
  const answer = async (q: Question): Promise<Answers[Question["op"]]> => {
    switch (q.op) {
      case "mouthBox": {
        const { look, lookKey } = await suite.clients.catalog.getAvatarLook({
          spaceId: suite.spaceId,
          avatarId: q.avatarId,
        });
        if (!look) throw new Error(`no look for ${q.avatarId}`);
        return (
          await PortraitRenderer.create({ look, lookKey, quality: "high", clock: systemClock })
        ).mouthBox();
      }
      case "watchStalls":
        watch = watchStalls();
        return null;
      case "stalls":
        return watch?.() ?? [];
      case "encoders":
        return liveEncoderPids();
      case "killEncoders": {
        const pids = liveEncoderPids();
        for (const pid of pids) process.kill(pid, "SIGKILL");
        return pids;
      }
    }
  };
  process.on("message", async (m: { id: number; question: Question }) => {
    try {
      send({ id: m.id, answer: await answer(m.question) });
    } catch (error) {
      send({ id: m.id, error: String(error) });
    }
  });
  // Stopped by the test (SIGTERM), or its test process is gone (the IPC channel closes): nothing is left.
  const stop = async () => {
    await suite.stop();
    process.exit(0);
  };
  process.once("SIGTERM", stop);
  process.once("disconnect", stop);
  send({ ready: { gatewayUrl: suite.gatewayUrl, apiKey: suite.apiKey } } satisfies Ready);
}

/** This process's main thread (its task whose id is the process's). */
const MAIN_THREAD_STAT = `/proc/self/task/${process.pid}/stat`;

/**
 * Where this process's event loop (the session's media is made here) stood still for more than 100 ms,
 * in ms from the watch's start: when the picture froze, was the sender still? `cpuMs` is what its main
 * thread ran meanwhile (10 ms ticks): about `ms`, its own work; far less, it waited for a core (the
 * browser shares this machine's two).
 */
function watchStalls(): () => Stall[] {
  const stalls: Stall[] = [];
  const start = performance.now();
  let last = start;
  let lastCpu = cpuMsOf(MAIN_THREAD_STAT);
  const timer = setInterval(() => {
    const now = performance.now();
    const cpu = cpuMsOf(MAIN_THREAD_STAT);
    if (now - last > 110) {
      stalls.push({ atMs: Math.round(last - start), ms: Math.round(now - last - 10), cpuMs: cpu - lastCpu });
    }
    last = now;
    lastCpu = cpu;
  }, 10);
  return () => {
    clearInterval(timer);
    return stalls;
  };
}

const send = process.send?.bind(process);
if (send) await serve(send);
