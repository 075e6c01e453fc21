/**
 * The load generator of `pnpm bench`, run as its own process so that it never shares a CPU's event loop
 * with what it measures: autocannon with the scenario given as JSON in argv[2]; prints one JSON LoadResult.
 */
import autocannon from "autocannon";
import type { LoadResult, Scenario } from "./scenario.js";

const scenario = JSON.parse(process.argv[2] ?? "{}") as Scenario;

type Context = { token?: string };
/** Completed mint+start+stop sequences (their stop answered 200) in the current run. */
let sequences = 0;

function requests(s: Scenario): autocannon.Request[] {
  const json = { "content-type": "application/json" };
  if (s.kind === "single")
    return s.headers.map((h) => ({ method: "POST", path: s.path, headers: { ...json, ...h }, body: s.body }));
  let turn = 0;
  const withToken = (path: string, last: boolean): autocannon.Request => ({
    method: "POST",
    path,
    body: "{}",
    setupRequest: (req, context: Context) => {
      if (!context.token) return undefined as unknown as autocannon.Request; // mint failed: start over
      return { ...req, headers: { ...json, authorization: `Bearer ${context.token}` } };
    },
    ...(last
      ? {
          onResponse: (status: number) => {
            if (status === 200) sequences++;
          },
        }
      : {}),
  });
  return [
    {
      method: "POST",
      path: s.path,
      body: s.body,
      setupRequest: (req) => ({ ...req, headers: { ...json, ...s.headers[turn++ % s.headers.length] } }),
      onResponse: (status: number, body: string, context: Context) => {
        context.token = status === 200 ? (JSON.parse(body).data?.session_token as string) : undefined;
      },
    },
    withToken("/v1/sessions/start", false),
    withToken("/v1/sessions/stop", true),
  ];
}

async function run(seconds: number): Promise<autocannon.Result> {
  sequences = 0;
  return autocannon({
    url: scenario.url,
    connections: scenario.connections,
    duration: seconds,
    requests: requests(scenario),
  });
}

if (scenario.warmupSeconds > 0) await run(scenario.warmupSeconds);
const r = await run(scenario.seconds);
const statuses: Record<string, number> = {};
for (const [code, { count }] of Object.entries(r.statusCodeStats ?? {})) {
  if (!code.startsWith("2")) statuses[code] = Number(count);
}
const ok = r.requests.total - r.non2xx;
const result: LoadResult = {
  requestsPerSecond: ok / r.duration,
  opsPerSecond: (scenario.kind === "lifecycle" ? sequences : ok) / r.duration,
  p50: r.latency.p50,
  p99: r.latency.p99,
  statuses,
  errors: r.errors + r.timeouts,
};
process.stdout.write(`${JSON.stringify(result)}\n`);
