import { spawn } from "node:child_process";
import { createInterface } from "node:readline";
import { createClients, identityFromKeys } from "@avatar/runtime";
import { repoRoot } from "@avatar/testkit";
import { type Backend, backendEnv } from "./backend.js";
import { commOf, descendants } from "./rss.js";

/** The one-process suite (what `pnpm start` runs) as a child process, on its own embedded Postgres. */
export async function startSuiteBackend(): Promise<Backend> {
  const child = spawn(process.execPath, ["--import", "tsx", "bench/src/lite-backend.ts"], {
    cwd: repoRoot,
    env: { ...process.env, ...backendEnv },
    stdio: ["ignore", "pipe", "pipe"],
  });
  // Its logs (warnings and errors only) are kept out of the report; the last ones are shown if it fails.
  let stderr = "";
  child.stderr.on("data", (d: Buffer) => {
    stderr = (stderr + d.toString()).slice(-20_000);
  });
  const lines = createInterface({ input: child.stdout });
  const started = await new Promise<{
    gatewayUrl: string;
    serviceUrls: Record<string, string>;
    operatorKey: string;
  }>((resolve, reject) => {
    child.once("exit", (code) =>
      reject(new Error(`the suite exited (${code}) before it was ready:\n${stderr}`)),
    );
    lines.on("line", (line) => {
      if (line.startsWith("{")) resolve(JSON.parse(line));
    });
  });
  const pid = child.pid ?? 0;
  return {
    gatewayUrl: started.gatewayUrl,
    clients: createClients(
      {
        tokens: started.serviceUrls.tokens,
        sessions: started.serviceUrls.sessions,
        catalog: started.serviceUrls.catalog,
      },
      identityFromKeys("avatarctl", started.operatorKey),
    ),
    processes: () => [
      { name: "suite (gateway + services + pipeline)", pids: [pid] },
      { name: "postgres", pids: descendants(pid).filter((p) => commOf(p) === "postgres") },
    ],
    stop: async () => {
      const exited = new Promise((resolve) => child.once("exit", resolve));
      child.kill("SIGTERM");
      await exited;
    },
  };
}
