/**
 * `pnpm bench:bus`: the CPU one core message costs its process on the services' bus (the bus of
 * `meterBus`, as every service has it): published on a session's subject and handled by a synchronous
 * subscriber in the same process, as a LITE session's frames are (a gateway publishes a client's audio
 * and handles the worker's frames; a worker the reverse). On the in-process bus and on NATS (a
 * nats-server of its own, as `pnpm bench`); `BENCH_BUS_SESSIONS` subjects, one subscription each.
 *
 * Settings (environment): BENCH_BUS_MESSAGES (per round, default 100000), BENCH_BUS_ROUNDS (default 6;
 * the first two warm up and are not in the median), BENCH_BUS_SESSIONS (default 1000),
 * BENCH_BUS_PAYLOAD_BYTES (default 200, an event's size).
 */
import { cpus, loadavg } from "node:os";
import { type Bus, connectNatsBus, createMemoryBus } from "@avatar/bus";
import { env, meterBus, readConfig } from "@avatar/runtime";
import { startNatsServer } from "@avatar/testkit";
import { median } from "./ab/plan.js";
import { fixed, say } from "./print.js";

const settings = readConfig({
  BENCH_BUS_MESSAGES: env.int({ default: 100_000, min: 1_000 }),
  BENCH_BUS_ROUNDS: env.int({ default: 6, min: 3 }),
  BENCH_BUS_SESSIONS: env.int({ default: 1_000, min: 1 }),
  BENCH_BUS_PAYLOAD_BYTES: env.int({ default: 200, min: 0 }),
});
const WARM_UP_ROUNDS = 2;
/** Publishing yields to the event loop this often, so that handling keeps up as it would in a service. */
const YIELD_EVERY = 500;

/** Microseconds of process CPU per message, one figure per round. */
async function cpuPerMessage(bus: Bus): Promise<number[]> {
  const sessions = Array.from({ length: settings.BENCH_BUS_SESSIONS }, () => crypto.randomUUID());
  const payload = new Uint8Array(settings.BENCH_BUS_PAYLOAD_BYTES);
  let handled = 0;
  const subscriptions = sessions.map((id) =>
    bus.subscribe(`rt.${id}.out`, () => {
      handled++;
    }),
  );
  await new Promise((r) => setTimeout(r, 300));
  const rounds: number[] = [];
  for (let round = 0; round < settings.BENCH_BUS_ROUNDS; round++) {
    const n = settings.BENCH_BUS_MESSAGES;
    handled = 0;
    const before = process.cpuUsage();
    for (let i = 0; i < n; i++) {
      bus.publish(`rt.${sessions[i % sessions.length]}.out`, payload);
      if (i % YIELD_EVERY === YIELD_EVERY - 1) await new Promise((r) => setImmediate(r));
    }
    while (handled < n) await new Promise((r) => setTimeout(r, 2));
    const used = process.cpuUsage(before);
    rounds.push((used.user + used.system) / n);
  }
  await Promise.all(subscriptions.map((s) => s.unsubscribe()));
  return rounds;
}

function row(name: string, rounds: number[]): string {
  const measured = median(rounds.slice(WARM_UP_ROUNDS));
  return `${name.padEnd(12)}${fixed(measured, 2).padEnd(10)}${rounds.map((r) => fixed(r, 2)).join(" ")}`;
}

const load = loadavg()
  .map((l) => l.toFixed(2))
  .join(" ");
const {
  BENCH_BUS_MESSAGES: messages,
  BENCH_BUS_PAYLOAD_BYTES: bytes,
  BENCH_BUS_SESSIONS: subjects,
} = settings;
say(`pnpm bench:bus, ${new Date().toISOString()}: ${cpus().length} cores, load average ${load}`);
say(`${messages} messages of ${bytes} bytes a round over ${subjects} subjects`);
say("bus         µs CPU per message (median; every round)");
const memory = meterBus(createMemoryBus({ logger: () => {} }), "bench");
try {
  say(row("in-process", await cpuPerMessage(memory)));
} finally {
  await memory.close();
}
const nats = await startNatsServer();
try {
  const bus = meterBus(await connectNatsBus({ url: nats.url }), "bench");
  try {
    say(row("NATS", await cpuPerMessage(bus)));
  } finally {
    await bus.close();
  }
} finally {
  await nats.stop();
}
