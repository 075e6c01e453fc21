import { describe, expect, it } from "vitest";
import { ConfigError, type ConfigSpec, env, readConfig } from "../src/config.js";
import { readProcessConfig } from "../src/process-config.js";

/** The problems readConfig reports for `spec` and `source` (fails the test when it does not throw). */
function problemsOf(spec: ConfigSpec, source: Record<string, string | undefined>): string[] {
  try {
    readConfig(spec, source);
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return (err as ConfigError).problems;
  }
  throw new Error("readConfig accepted the configuration");
}

describe("readConfig", () => {
  it("reads from process.env when no source is given", () => {
    process.env.AVATAR_CONFIG_TEST_VALUE = "from-env";
    try {
      expect(readConfig({ AVATAR_CONFIG_TEST_VALUE: env.string() })).toEqual({
        AVATAR_CONFIG_TEST_VALUE: "from-env",
      });
    } finally {
      delete process.env.AVATAR_CONFIG_TEST_VALUE;
    }
  });

  it("reports every bad or missing value at once, by name", () => {
    const spec = {
      NAME: env.string(),
      COUNT: env.int({ min: 1, max: 10 }),
      ENABLED: env.bool(),
      MODE: env.oneOf(["a", "b"] as const),
      HOME_URL: env.url(),
      FINE: env.int({ default: 3 }),
    };
    let error: unknown;
    try {
      readConfig(spec, { COUNT: "11", ENABLED: "maybe", MODE: "c", HOME_URL: "ftp://x" });
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(ConfigError);
    const { problems, message } = error as ConfigError;
    expect(problems).toEqual([
      "NAME is required: a string",
      'COUNT must be an integer from 1 to 10 (got "11")',
      'ENABLED must be true or false (got "maybe")',
      'MODE must be one of a, b (got "c")',
      'HOME_URL must be a URL (http:, https:) (got "ftp://x")',
    ]);
    for (const p of problems) expect(message).toContain(p);
  });

  it("treats an empty value as missing: the default applies, or a required setting is reported", () => {
    expect(readConfig({ HOST: env.string({ default: "h" }) }, { HOST: "" })).toEqual({ HOST: "h" });
    expect(problemsOf({ NAME: env.string() }, { NAME: "" })).toEqual(["NAME is required: a string"]);
    expect(problemsOf({ COUNT: env.int() }, { COUNT: "" })).toHaveLength(1);
  });

  describe("string", () => {
    it("passes the value through and falls back to its default", () => {
      expect(readConfig({ A: env.string(), B: env.string({ default: "d" }) }, { A: " x " })).toEqual({
        A: " x ",
        B: "d",
      });
    });

    it("optionalString is undefined when missing or empty", () => {
      const spec = { S: env.optionalString() };
      expect(readConfig(spec, {})).toEqual({ S: undefined });
      expect(readConfig(spec, { S: "" })).toEqual({ S: undefined });
      expect(readConfig(spec, { S: "v" })).toEqual({ S: "v" });
    });
  });

  describe("int", () => {
    const spec = { N: env.int({ min: -5, max: 5, default: 2 }) };

    it("accepts the bounds themselves and values between them, trimmed", () => {
      expect(readConfig(spec, { N: "-5" }).N).toBe(-5);
      expect(readConfig(spec, { N: "5" }).N).toBe(5);
      expect(readConfig(spec, { N: " 0 " }).N).toBe(0);
      expect(readConfig(spec, {}).N).toBe(2);
    });

    it("rejects values just outside the bounds", () => {
      expect(problemsOf(spec, { N: "-6" })).toEqual(['N must be an integer from -5 to 5 (got "-6")']);
      expect(problemsOf(spec, { N: "6" })).toEqual(['N must be an integer from -5 to 5 (got "6")']);
    });

    it("rejects what is not a whole decimal number", () => {
      for (const raw of ["1.5", "1e3", "0x10", "abc", "5 apples", "+"]) {
        expect(problemsOf(spec, { N: raw }), raw).toHaveLength(1);
      }
    });

    it("without bounds stays within safe integers", () => {
      const unbounded = { N: env.int() };
      expect(readConfig(unbounded, { N: String(Number.MAX_SAFE_INTEGER) }).N).toBe(Number.MAX_SAFE_INTEGER);
      expect(problemsOf(unbounded, { N: "9007199254740993" })).toHaveLength(1);
      expect(problemsOf(unbounded, {})).toEqual([
        `N is required: an integer from ${Number.MIN_SAFE_INTEGER} to ${Number.MAX_SAFE_INTEGER}`,
      ]);
    });
  });

  describe("bool", () => {
    it("understands the usual spellings in any case", () => {
      const spec = { B: env.bool() };
      for (const raw of ["1", "true", "YES", " on "]) expect(readConfig(spec, { B: raw }).B, raw).toBe(true);
      for (const raw of ["0", "False", "no", "OFF"]) expect(readConfig(spec, { B: raw }).B, raw).toBe(false);
      expect(problemsOf(spec, { B: "2" })).toEqual(['B must be true or false (got "2")']);
    });

    it("falls back to its default", () => {
      expect(readConfig({ B: env.bool({ default: true }) }, {}).B).toBe(true);
    });
  });

  describe("url", () => {
    it("accepts the allowed protocols and drops trailing slashes", () => {
      expect(readConfig({ U: env.url() }, { U: "https://example.test/base//" }).U).toBe(
        "https://example.test/base",
      );
      expect(readConfig({ U: env.url({ protocols: ["nats:"] }) }, { U: "nats://n:4222" }).U).toBe(
        "nats://n:4222",
      );
    });

    it("rejects other protocols and what is not a URL", () => {
      const spec = { U: env.url() };
      expect(problemsOf(spec, { U: "postgres://db/x" })).toHaveLength(1);
      expect(problemsOf(spec, { U: "not a url" })).toEqual([
        'U must be a URL (http:, https:) (got "not a url")',
      ]);
    });

    it("falls back to its default", () => {
      expect(readConfig({ U: env.url({ default: "http://d" }) }, {}).U).toBe("http://d");
    });

    it("optionalUrl is undefined when missing or empty and is checked when set", () => {
      const spec = { U: env.optionalUrl({ protocols: ["postgres:"] }) };
      expect(readConfig(spec, {}).U).toBeUndefined();
      expect(readConfig(spec, { U: "" }).U).toBeUndefined();
      expect(readConfig(spec, { U: "postgres://u@h/db" }).U).toBe("postgres://u@h/db");
      expect(problemsOf(spec, { U: "http://h" })).toEqual(['U must be a URL (postgres:) (got "http://h")']);
    });
  });

  describe("oneOf", () => {
    it("accepts exactly the listed values and falls back to its default", () => {
      const spec = { L: env.oneOf(["debug", "info"] as const, { default: "info" }) };
      expect(readConfig(spec, { L: "debug" }).L).toBe("debug");
      expect(readConfig(spec, {}).L).toBe("info");
      expect(problemsOf(spec, { L: "INFO" })).toEqual(['L must be one of debug, info (got "INFO")']);
    });
  });
});

describe("readProcessConfig", () => {
  it("has defaults for everything", () => {
    expect(readProcessConfig({})).toMatchObject({
      PORT: 8080,
      HOST: "127.0.0.1",
      LOG_LEVEL: "info",
      DATA_DIR: ".data",
      DATABASE_URL: undefined,
    });
  });

  it("allows port 0 (any free port) and rejects 65536", () => {
    expect(readProcessConfig({ PORT: "0" }).PORT).toBe(0);
    expect(() => readProcessConfig({ PORT: "65536" })).toThrow(ConfigError);
  });
});
