import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["**/test/**/*.test.ts"],
    exclude: ["**/node_modules/**", ".data/**"],
    globalSetup: ["packages/testkit/src/global-setup.ts"],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Sockets, servers and child processes: forks isolate them per test file.
    pool: "forks",
  },
});
