import { describe, expect, it } from "vitest";
import { backendEnv } from "../src/backend/environment.js";

describe("BENCH_BACKEND_ENV", () => {
  it("is NAME=VALUE pairs split on spaces; a value may hold = and :", () => {
    expect(backendEnv(undefined)).toEqual({});
    expect(backendEnv(" ")).toEqual({});
    expect(
      backendEnv(
        "GLIBC_TUNABLES=glibc.malloc.trim_threshold=268435456:glibc.malloc.top_pad=1  MALLOC_ARENA_MAX=2",
      ),
    ).toEqual({
      GLIBC_TUNABLES: "glibc.malloc.trim_threshold=268435456:glibc.malloc.top_pad=1",
      MALLOC_ARENA_MAX: "2",
    });
  });

  it("refuses a pair without a name or an =", () => {
    expect(() => backendEnv("GLIBC_TUNABLES")).toThrow(/expected NAME=VALUE, got GLIBC_TUNABLES/);
    expect(() => backendEnv("=1")).toThrow(/expected NAME=VALUE/);
  });
});
