import { spawn } from "node:child_process";
import path from "node:path";
import type { LoadResult, Scenario } from "./scenario.js";

const GENERATOR = path.join(import.meta.dirname, "generator.ts");

/** Runs one scenario in a separate load-generator process and answers its result. */
export function drive(scenario: Scenario): Promise<LoadResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["--import", "tsx", GENERATOR, JSON.stringify(scenario)], {
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    let err = "";
    child.stdout.on("data", (d: Buffer) => {
      out += d.toString();
    });
    child.stderr.on("data", (d: Buffer) => {
      err = (err + d.toString()).slice(-4000);
    });
    child.once("error", reject);
    child.once("exit", (code) => {
      const line = out.trim().split("\n").at(-1) ?? "";
      if (code === 0 && line.startsWith("{")) resolve(JSON.parse(line) as LoadResult);
      else reject(new Error(`load generator exited ${code}: ${err}`));
    });
  });
}
