import { defineConfig } from "vitest/config";

/**
 * Two groups of tests, one after the other. Most tests run files in parallel (forks). The `*.solo.test.ts`
 * files measure media in real time (frame rates, audio/video sync in a real browser): they run after
 * everything else, one at a time, with the machine to themselves.
 */
export default defineConfig({
  test: {
    exclude: ["**/node_modules/**", ".data/**"],
    globalSetup: ["packages/testkit/src/global-setup.ts"],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Sockets, servers and child processes: forks isolate them per test file.
    pool: "forks",
    projects: [
      {
        extends: true,
        test: {
          name: "tests",
          include: ["**/test/**/*.test.ts"],
          exclude: ["**/*.solo.test.ts", "**/node_modules/**", ".data/**"],
        },
      },
      {
        extends: true,
        test: {
          name: "solo",
          include: ["**/test/**/*.solo.test.ts"],
          exclude: ["**/node_modules/**", ".data/**"],
          fileParallelism: false,
          sequence: { groupOrder: 1 },
          testTimeout: 120_000,
        },
      },
    ],
  },
});
