/**
 * Configuration from the environment: each setting has a parser and usually a default; every bad value
 * is reported at once, by name, before anything starts.
 */

export type Env = Record<string, string | undefined>;

export interface Setting<T> {
  readonly parse: (raw: string) => T;
  readonly fallback?: () => T;
  readonly describe: string;
}

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`invalid configuration:\n  ${problems.join("\n  ")}`);
    this.name = "ConfigError";
  }
}

function setting<T>(describe: string, parse: (raw: string) => T, fallback?: () => T): Setting<T> {
  return fallback === undefined ? { describe, parse } : { describe, parse, fallback };
}

function fail(expected: string): never {
  throw new Error(expected);
}

export const env = {
  string(options: { default?: string } = {}): Setting<string> {
    const d = options.default;
    return setting("a string", (raw) => raw, d === undefined ? undefined : () => d);
  },
  optionalString(): Setting<string | undefined> {
    return setting(
      "a string",
      (raw) => (raw === "" ? undefined : raw),
      () => undefined,
    );
  },
  int(options: { default?: number; min?: number; max?: number } = {}): Setting<number> {
    const { min = Number.MIN_SAFE_INTEGER, max = Number.MAX_SAFE_INTEGER } = options;
    const describe = `an integer from ${min} to ${max}`;
    const d = options.default;
    return setting(
      describe,
      (raw) => {
        if (!/^-?\d+$/.test(raw.trim())) fail(describe);
        const n = Number(raw.trim());
        if (n < min || n > max) fail(describe);
        return n;
      },
      d === undefined ? undefined : () => d,
    );
  },
  optionalInt(options: { min?: number; max?: number } = {}): Setting<number | undefined> {
    const inner = env.int(options);
    return setting(
      inner.describe,
      (raw) => (raw === "" ? undefined : inner.parse(raw)),
      () => undefined,
    );
  },
  bool(options: { default?: boolean } = {}): Setting<boolean> {
    const d = options.default;
    return setting(
      "true or false",
      (raw) => {
        const v = raw.trim().toLowerCase();
        if (["1", "true", "yes", "on"].includes(v)) return true;
        if (["0", "false", "no", "off"].includes(v)) return false;
        return fail("true or false");
      },
      d === undefined ? undefined : () => d,
    );
  },
  url(options: { default?: string; protocols?: string[] } = {}): Setting<string> {
    const protocols = options.protocols ?? ["http:", "https:"];
    const describe = `a URL (${protocols.join(", ")})`;
    const d = options.default;
    return setting(
      describe,
      (raw) => {
        let u: URL;
        try {
          u = new URL(raw);
        } catch {
          return fail(describe);
        }
        if (!protocols.includes(u.protocol)) fail(describe);
        return raw.replace(/\/+$/, "");
      },
      d === undefined ? undefined : () => d,
    );
  },
  optionalUrl(options: { protocols?: string[] } = {}): Setting<string | undefined> {
    const inner = env.url(options);
    return setting(
      inner.describe,
      (raw) => (raw === "" ? undefined : inner.parse(raw)),
      () => undefined,
    );
  },
  oneOf<const T extends string>(values: readonly T[], options: { default?: T } = {}): Setting<T> {
    const describe = `one of ${values.join(", ")}`;
    const d = options.default;
    return setting(
      describe,
      (raw) => (values.includes(raw as T) ? (raw as T) : fail(describe)),
      d === undefined ? undefined : () => d,
    );
  },
};

export type ConfigSpec = Record<string, Setting<unknown>>;
export type ConfigOf<S extends ConfigSpec> = { [K in keyof S]: S[K] extends Setting<infer T> ? T : never };

/** Reads every setting of `spec` from `source`; throws one ConfigError naming every bad or missing value. */
export function readConfig<S extends ConfigSpec>(spec: S, source: Env = process.env): ConfigOf<S> {
  const out: Record<string, unknown> = {};
  const problems: string[] = [];
  for (const [name, s] of Object.entries(spec)) {
    const raw = source[name];
    // An empty variable counts as unset: `NAME=` must not satisfy a required setting.
    if (raw === undefined || raw === "") {
      if (s.fallback) out[name] = s.fallback();
      else problems.push(`${name} is required: ${s.describe}`);
      continue;
    }
    try {
      out[name] = s.parse(raw);
    } catch {
      problems.push(`${name} must be ${s.describe} (got ${JSON.stringify(raw)})`);
    }
  }
  if (problems.length > 0) throw new ConfigError(problems);
  return out as ConfigOf<S>;
}
