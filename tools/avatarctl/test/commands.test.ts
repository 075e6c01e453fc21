import { execFile } from "node:child_process";
import { randomUUID } from "node:crypto";
import { writeFile } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { readCatalogFile } from "@avatar/catalog";
import { VoiceType } from "@avatar/contracts/catalog";
import { Code, ConnectError } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type CliResult, cli, startTestServices, type TestServices } from "./support.js";

/** Every command end to end: avatarctl in this process, the real tokens and catalog services over HTTP. */

let services: TestServices;
const catalogPath = fileURLToPath(new URL("../../../services/catalog/seed/catalog.json", import.meta.url));
const repoCatalog = readCatalogFile();

beforeAll(async () => {
  services = await startTestServices();
});
afterAll(async () => {
  await services?.stop();
});

const ctl = (...argv: string[]) => cli(argv, services.env);

function expectOk(result: CliResult): CliResult {
  expect(result.stderr.includes("avatarctl:") ? result.stderr : "").toBe("");
  expect(result.code).toBe(0);
  return result;
}

function expectFailure(result: CliResult, code: 1 | 2, message: RegExp): void {
  expect(result.code).toBe(code);
  expect(result.stderr).toMatch(message);
  expect(result.stderr).not.toMatch(/\n\s+at /);
}

async function createSpace(...extra: string[]): Promise<{ space_id: string; api_key: string }> {
  const result = expectOk(
    await ctl("space", "create", "--name", `space ${randomUUID()}`, "--json", ...extra),
  );
  return JSON.parse(result.stdout);
}

async function authenticates(apiKey: string): Promise<string | undefined> {
  try {
    return (await services.clients.tokens.authenticateApiKey({ apiKey })).space?.id;
  } catch (err) {
    if (err instanceof ConnectError && err.code === Code.Unauthenticated) return undefined;
    throw err;
  }
}

async function writeJson(name: string, value: unknown): Promise<string> {
  const file = path.join(services.dir, name);
  await writeFile(file, typeof value === "string" ? value : JSON.stringify(value));
  return file;
}

describe("space create", () => {
  it("with --json prints exactly the space id and the API key, and the key authenticates", async () => {
    const result = expectOk(await ctl("space", "create", "--name", "Acme", "--json"));
    expect(result.stdout.endsWith("\n")).toBe(true);
    const created = JSON.parse(result.stdout);
    expect(Object.keys(created).sort()).toEqual(["api_key", "space_id"]);
    expect(result.stderr).toBe("");
    expect(await authenticates(created.api_key)).toBe(created.space_id);
  });

  it("prints the id and the key once for people, with the warning on stderr", async () => {
    const result = expectOk(await ctl("space", "create", "--name", "Humans"));
    const key = /api key:\s+(\S+)/.exec(result.stdout)?.[1] ?? "";
    const spaceId = /space id:\s+(\S+)/.exec(result.stdout)?.[1];
    expect(await authenticates(key)).toBe(spaceId);
    expect(result.stderr).toMatch(/shown only this once/);
  });

  it("sets tier and session-duration limit, and grants the initial credits once per space", async () => {
    const { space_id } = await createSpace(
      "--tier",
      "pro",
      "--max-session-duration",
      "900",
      "--credits",
      "250.5",
    );
    const got = JSON.parse(expectOk(await ctl("space", "get", "--space", space_id, "--json")).stdout);
    expect(got).toMatchObject({ id: space_id, tier: "pro", max_session_duration: 900 });
    expect(services.sessions.creditsLeft(space_id)).toBe("250.5");
    const grants = services.sessions.grants.filter((g) => g.spaceId === space_id);
    expect(grants).toHaveLength(1);
    expect(grants[0]?.idempotencyKey).toBe(`space-create:${space_id}`);
  });

  it("still prints the key when the grant fails, and the hinted command grants exactly once", async () => {
    services.sessions.failNextGrant = true;
    const result = await ctl("space", "create", "--name", "Unlucky", "--credits", "40", "--json");
    expectFailure(result, 1, /sessions service unavailable \(test double\) \(unavailable\)/);
    const created = JSON.parse(result.stdout);
    expect(await authenticates(created.api_key)).toBe(created.space_id);
    expect(services.sessions.creditsLeft(created.space_id)).toBe("0");

    const hinted = /run: avatarctl (.+)$/m.exec(result.stderr)?.[1]?.split(" ") ?? [];
    expect(hinted).toContain(`space-create:${created.space_id}`);
    expectOk(await ctl(...hinted));
    expectOk(await ctl(...hinted));
    expect(services.sessions.creditsLeft(created.space_id)).toBe("40");
  });

  it("refuses bad values before creating anything", async () => {
    const before = (await services.clients.tokens.listSpaces({})).spaces.length;
    expectFailure(
      await ctl("space", "create", "--name", "Nope", "--credits", "-5"),
      2,
      /--credits must be a positive/,
    );
    expectFailure(
      await ctl("space", "create", "--name", "Nope", "--tier", "gold"),
      2,
      /--tier must be one of/,
    );
    expect((await services.clients.tokens.listSpaces({})).spaces).toHaveLength(before);
  });

  it("reports a service refusal with its message and code", async () => {
    const result = await ctl("space", "create", "--name", "x".repeat(200));
    expectFailure(
      result,
      1,
      /^avatarctl: name must have 1 to 128 characters \(invalid_argument, field name\)\n$/,
    );
  });
});

describe("space list, get and update", () => {
  it("lists spaces as JSON and as a table", async () => {
    const { space_id } = await createSpace();
    const listed = JSON.parse(expectOk(await ctl("space", "list", "--json")).stdout);
    expect(listed.map((s: { id: string }) => s.id)).toContain(space_id);
    const table = expectOk(await ctl("space", "list")).stdout;
    expect(table.split("\n")[0]).toMatch(/^ID\s+NAME\s+TIER\s+MAX_SESSION_DURATION\s+CREATED_AT$/);
    expect(table).toContain(space_id);
  });

  it("updates tier and name, and 0 puts the tier's limit back", async () => {
    const { space_id } = await createSpace("--max-session-duration", "120");
    const updated = expectOk(
      await ctl("space", "update", "--space", space_id, "--tier", "scale", "--name", "Renamed", "--json"),
    );
    expect(JSON.parse(updated.stdout)).toMatchObject({
      name: "Renamed",
      tier: "scale",
      max_session_duration: 120,
    });
    const reset = expectOk(
      await ctl("space", "update", "--space", space_id, "--max-session-duration", "0", "--json"),
    );
    expect(JSON.parse(reset.stdout).max_session_duration).toBe(7200);
  });

  it("answers an unknown space with the service's not-found", async () => {
    expectFailure(
      await ctl("space", "get", "--space", randomUUID()),
      1,
      /^avatarctl: Space not found \(not_found, field space_id\)\n$/,
    );
  });
});

describe("API keys", () => {
  it("creates a key that authenticates, lists it by prefix, and revoking it stops it", async () => {
    const { space_id, api_key: firstKey } = await createSpace();
    const created = JSON.parse(
      expectOk(await ctl("key", "create", "--space", space_id, "--name", "ci", "--json")).stdout,
    );
    expect(Object.keys(created).sort()).toEqual(["api_key", "api_key_id"]);
    expect(await authenticates(created.api_key)).toBe(space_id);

    const keys = JSON.parse(expectOk(await ctl("key", "list", "--space", space_id, "--json")).stdout);
    expect(keys.map((k: { name: string }) => k.name).sort()).toEqual(["ci", "default"]);
    const listed = keys.find((k: { id: string }) => k.id === created.api_key_id);
    expect(created.api_key.startsWith(listed.prefix)).toBe(true);
    expect(JSON.stringify(keys)).not.toContain(created.api_key);

    expectOk(await ctl("key", "revoke", "--key", created.api_key_id));
    expect(await authenticates(created.api_key)).toBeUndefined();
    expect(await authenticates(firstKey)).toBe(space_id);
    const after = JSON.parse(expectOk(await ctl("key", "list", "--space", space_id, "--json")).stdout);
    expect(after.find((k: { id: string }) => k.id === created.api_key_id).revoked_at).not.toBeNull();
  });

  it("revoking an unknown key is a not-found", async () => {
    expectFailure(await ctl("key", "revoke", "--key", randomUUID()), 1, /API key not found \(not_found/);
  });
});

describe("signing keys", () => {
  it("rotates to a new ES256 key, and lists it as current with the retired one still verifying", async () => {
    const before = JSON.parse(expectOk(await ctl("signing-key", "list", "--json")).stdout);
    const previous = before.find((k: { current: boolean }) => k.current);
    expect(previous).toBeDefined();

    const rotated = JSON.parse(expectOk(await ctl("signing-key", "rotate", "--json")).stdout);
    expect(rotated).toMatchObject({ alg: "ES256", current: true });
    expect(rotated.kid).not.toBe(previous.kid);

    const after = JSON.parse(expectOk(await ctl("signing-key", "list", "--json")).stdout);
    expect(after.map((k: { kid: string; current: boolean }) => [k.kid, k.current])).toEqual(
      expect.arrayContaining([
        [rotated.kid, true],
        [previous.kid, false],
      ]),
    );
    expect(JSON.stringify(after)).not.toMatch(/"d"/);
    const table = expectOk(await ctl("signing-key", "list")).stdout;
    expect(table.split("\n")[0]).toMatch(/^KID\s+ALG\s+CURRENT\s+CREATED_AT$/);
    expect(table).toContain(rotated.kid);
  });

  it("refuses an option it does not know", async () => {
    expectFailure(await ctl("signing-key", "rotate", "--alg", "RS256"), 2, /alg/);
  });
});

describe("credits", () => {
  it("grants with an idempotency key once, and shows the balance", async () => {
    const { space_id } = await createSpace();
    const grant = ["credits", "grant", "--space", space_id, "--amount", "12.5", "--note", "promo"];
    expectOk(await ctl(...grant, "--idempotency-key", "promo-1"));
    expectOk(await ctl(...grant, "--idempotency-key", "promo-1"));
    expect(expectOk(await ctl(...grant)).stdout).toMatch(/credits left: 25$/m);
    expect(expectOk(await ctl("credits", "show", "--space", space_id)).stdout).toBe("credits left: 25\n");
    const shown = JSON.parse(expectOk(await ctl("credits", "show", "--space", space_id, "--json")).stdout);
    expect(shown).toEqual({ space_id, credits_left: "25" });
    expect(services.sessions.grants.filter((g) => g.spaceId === space_id).map((g) => g.note)).toEqual([
      "promo",
      "promo",
    ]);
  });

  it("grants nothing to a space that does not exist", async () => {
    const unknown = randomUUID();
    expectFailure(
      await ctl("credits", "grant", "--space", unknown, "--amount", "5"),
      1,
      /Space not found \(not_found/,
    );
    expect(services.sessions.grants.some((g) => g.spaceId === unknown)).toBe(false);
  });

  it("prints the generated idempotency key when a grant fails", async () => {
    const { space_id } = await createSpace();
    services.sessions.failNextGrant = true;
    const result = await ctl("credits", "grant", "--space", space_id, "--amount", "3");
    expectFailure(result, 1, /hint: .*retry with --idempotency-key avatarctl:[0-9a-f-]{36}/);
  });
});

describe("import", () => {
  it("imports the repository's catalog file voices as public voices", async () => {
    const result = expectOk(await ctl("import", "voices", catalogPath));
    expect(result.stdout).toMatch(new RegExp(`^imported ${repoCatalog.voices.length} voices \\(public\\)`));
    const voices = (
      await services.clients.catalog.listVoices({ voiceType: VoiceType.PUBLIC, page: { pageSize: 100 } })
    ).voices;
    expect(voices.map((v) => v.id).sort()).toEqual(repoCatalog.voices.map((v) => v.id).sort());
    const ava = voices.find((v) => v.name === "Ava");
    expect(ava?.providerVoiceIds).toEqual(
      repoCatalog.voices.find((v) => v.name === "Ava")?.provider_voice_ids,
    );
  });

  it("imports the catalog's avatars publicly, or privately to a space with --space", async () => {
    expectOk(await ctl("import", "voices", catalogPath));
    const publicFile = await writeJson("public-avatars.json", repoCatalog.public_avatars);
    const imported = JSON.parse(expectOk(await ctl("import", "avatars", publicFile, "--json")).stdout);
    expect(imported).toHaveLength(repoCatalog.public_avatars.length);
    expect(
      imported.every((a: { is_public: boolean; space_id: string | null }) => a.is_public && !a.space_id),
    ).toBe(true);

    const { space_id } = await createSpace();
    const privateFile = await writeJson("demo-avatars.json", { avatars: repoCatalog.demo_space_avatars });
    expectOk(await ctl("import", "avatars", privateFile, "--space", space_id));
    const own = (await services.clients.catalog.listAvatars({ spaceId: space_id, page: { pageSize: 100 } }))
      .avatars;
    expect(own.map((a) => a.id).sort()).toEqual(repoCatalog.demo_space_avatars.map((a) => a.id).sort());
    expect(own.every((a) => !a.isPublic && a.spaceId === space_id)).toBe(true);
    expect(own.find((a) => a.is1080p)?.defaultVoice?.name).toBeTruthy();
  });

  it("says where the avatars are when given the whole catalog file", async () => {
    expectFailure(
      await ctl("import", "avatars", catalogPath),
      2,
      /expected a JSON array of avatars, or an object whose "avatars" is an array \(its keys: .*public_avatars/,
    );
  });

  it.each([
    ["bad JSON", "[{", 2, /is not valid JSON/],
    ["a missing name", [{ name: "Fine" }, { id: randomUUID() }], 2, /avatars\[1\]: name is required/],
    [
      "a non-UUID id",
      [{ name: "Fine" }, { id: "avatar-7", name: "Seven" }],
      2,
      /avatars\[1\]: id must be a UUID/,
    ],
    ["an unknown field", [{ name: "Fine", colour: "red" }], 2, /avatars\[0\]: unknown field "colour"/],
    [
      "an unknown default voice (refused by the service mid-batch)",
      [{ name: "Fine" }, { name: "Mute", default_voice_id: randomUUID() }],
      1,
      /avatars\[1\]: default voice .* not found \(not_found/,
    ],
  ] as const)("imports nothing from a file with %s", async (_case, content, code, message) => {
    const { space_id } = await createSpace();
    const file = await writeJson(`bad-${randomUUID()}.json`, content);
    expectFailure(await ctl("import", "avatars", file, "--space", space_id), code, message);
    const own = await services.clients.catalog.listAvatars({ spaceId: space_id, page: { pageSize: 100 } });
    expect(own.avatars).toHaveLength(0);
  });

  it("imports nothing into a space that does not exist", async () => {
    const unknown = randomUUID();
    const file = await writeJson("private-voice.json", { voices: [{ name: "Whisper", language: "en" }] });
    expectFailure(await ctl("import", "voices", file, "--space", unknown), 1, /Space not found/);
    const own = await services.clients.catalog.listVoices({ spaceId: unknown, voiceType: VoiceType.PRIVATE });
    expect(own.voices).toHaveLength(0);
  });

  it("reports a missing file as a usage error", async () => {
    expectFailure(
      await ctl("import", "voices", path.join(services.dir, "absent.json")),
      2,
      /cannot read .*absent\.json: no such file/,
    );
  });
});

describe("the avatarctl process (pnpm avatarctl)", () => {
  const repoRoot = fileURLToPath(new URL("../../../", import.meta.url));

  /**
   * The process reads the clock the services in this process read: under CI's clock guard (faketime,
   * which works by LD_PRELOAD) its service tokens would otherwise be dated 400 days before theirs.
   */
  function clockEnv(): Record<string, string> {
    const names = ["LD_PRELOAD", "FAKETIME", "FAKETIME_DONT_FAKE_MONOTONIC"];
    return Object.fromEntries(names.flatMap((n) => (process.env[n] ? [[n, process.env[n]]] : [])));
  }

  function runProcess(argv: string[]): Promise<CliResult> {
    return new Promise((resolve) => {
      execFile(
        process.execPath,
        ["--import", "tsx", "tools/avatarctl/src/main.ts", ...argv],
        { cwd: repoRoot, env: { ...clockEnv(), PATH: process.env.PATH, ...services.env }, timeout: 60_000 },
        (err, stdout, stderr) => {
          const code = err ? (typeof err.code === "number" ? err.code : -1) : 0;
          resolve({ code, stdout, stderr });
        },
      );
    });
  }

  it("exits with the command's code and leaves stdout to the result", async () => {
    const created = await runProcess(["space", "create", "--name", "From a process", "--json"]);
    expect(created.code).toBe(0);
    expect(Object.keys(JSON.parse(created.stdout)).sort()).toEqual(["api_key", "space_id"]);
    const refused = await runProcess(["space", "get", "--space", randomUUID()]);
    expect(refused).toMatchObject({ code: 1, stdout: "" });
    expect(refused.stderr).toMatch(/^avatarctl: Space not found/);
    expect((await runProcess(["space", "frob"])).code).toBe(2);
  });
});
