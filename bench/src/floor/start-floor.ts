import { type SpawnedProcess, spawnEntry } from "@avatar/testkit";

export interface Floor {
  url: string;
  process: SpawnedProcess;
  stop(): Promise<void>;
}

/** Starts a floor server (`bench/src/floor/*.ts`) as its own process; answers once it printed its URL. */
export async function startFloor(entry: string, env: Record<string, string> = {}): Promise<Floor> {
  const floor = spawnEntry("floor", entry, env);
  for (let i = 0; i < 600; i++) {
    const line = floor
      .output()
      .split("\n")
      .find((l) => l.startsWith("{"));
    if (line) {
      return {
        url: (JSON.parse(line) as { url: string }).url,
        process: floor,
        stop: () => floor.stop().then(() => {}),
      };
    }
    if (floor.child.exitCode !== null) throw new Error(`the floor exited:\n${floor.output()}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  await floor.stop();
  throw new Error(`the floor did not start:\n${floor.output()}`);
}
