import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { AgentsService } from "@avatar/contracts/agents";
import { SessionsService } from "@avatar/contracts/sessions";
import { TokensService } from "@avatar/contracts/tokens";
import type { DescService } from "@bufbuild/protobuf";
import {
  type Client,
  Code,
  ConnectError,
  createClient,
  createRouterTransport,
  type Interceptor,
  type Transport,
} from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import { SignJWT } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { services } from "../src/clients.js";
import { ConfigError } from "../src/config.js";
import { errorDetailOf } from "../src/errors.js";
import {
  formatIdentitySet,
  generateIdentitySet,
  identityFromEnv,
  identityFromKeys,
  identityOf,
  localIdentityFile,
  parseIdentitySet,
  parsePublicKeys,
  privateKeyFromSeed,
} from "../src/identity-keys.js";
import { type Listening, listen, serviceHandler } from "../src/server.js";
import { allowedCallers, callersOf } from "../src/service-callers.js";
import {
  type CallerName,
  callerNames,
  IDENTITY_REFUSED,
  presentIdentity,
  requireCaller,
  type ServiceIdentity,
} from "../src/service-identity.js";
import { collectingLogger, testIdentities, testIdentity } from "./support.js";

const AGENTS = AgentsService.typeName;
const at = (iso: string) => () => new Date(iso);

async function refusal(promise: Promise<unknown>): Promise<ConnectError> {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ConnectError);
  return err as ConnectError;
}

async function expectRefused(promise: Promise<unknown>, code: Code, message: RegExp | string) {
  const err = await refusal(promise);
  expect(err.code).toBe(code);
  expect(err.rawMessage).toMatch(message);
  expect(errorDetailOf(err)?.reason).toBe(IDENTITY_REFUSED);
}

const bearer = async (identity: ServiceIdentity, audience = AGENTS) =>
  `Bearer ${await identity.credential(audience)}`;

describe("service credentials, called directly", () => {
  it("name their caller to the callee they were signed for", async () => {
    const pipeline = testIdentity("pipeline");
    const agents = testIdentity("agents");
    expect(await agents.verify(await bearer(pipeline), AGENTS)).toBe("pipeline");
    expect(await agents.verify(await bearer(testIdentity("avatarctl")), AGENTS)).toBe("avatarctl");
  });

  it("are refused when missing, malformed, for another callee, or from a key nobody trusts", async () => {
    const agents = testIdentity("agents");
    const pipeline = testIdentity("pipeline");
    await expectRefused(agents.verify(null, AGENTS), Code.Unauthenticated, "missing service credential");
    await expectRefused(agents.verify("Basic abc", AGENTS), Code.Unauthenticated, "missing");
    await expectRefused(agents.verify("Bearer not.a.jwt", AGENTS), Code.Unauthenticated, "not a JWT");
    await expectRefused(
      agents.verify(await bearer(pipeline, TokensService.typeName), AGENTS),
      Code.Unauthenticated,
      /invalid service credential from pipeline: ERR_JWT_CLAIM_VALIDATION_FAILED/,
    );
    // Same name, another set's key: an impostor without the Secret.
    const impostor = identityOf(generateIdentitySet(), "pipeline");
    await expectRefused(
      agents.verify(await bearer(impostor), AGENTS),
      Code.Unauthenticated,
      "invalid service credential from pipeline: bad signature",
    );
    const stranger = await new SignJWT({})
      .setProtectedHeader({ alg: "EdDSA", typ: "avatar-service+jwt" })
      .setIssuer("mallory")
      .setAudience(AGENTS)
      .setIssuedAt()
      .setExpirationTime("1m")
      .sign(privateKeyFromSeed(testIdentities.privateKeys.pipeline));
    await expectRefused(
      agents.verify(`Bearer ${stranger}`, AGENTS),
      Code.Unauthenticated,
      /unknown caller "mallory"/,
    );
  });

  it("are refused with a signature of the right key but the wrong type (a session token is no credential)", async () => {
    const token = await new SignJWT({})
      .setProtectedHeader({ alg: "EdDSA", typ: "JWT" })
      .setIssuer("pipeline")
      .setAudience(AGENTS)
      .setIssuedAt()
      .setExpirationTime("1m")
      .sign(privateKeyFromSeed(testIdentities.privateKeys.pipeline));
    await expectRefused(
      testIdentity("agents").verify(`Bearer ${token}`, AGENTS),
      Code.Unauthenticated,
      /pipeline/,
    );
  });

  it("expire: a minute's lifetime, 30 s of clock difference tolerated either way", async () => {
    const minted = testIdentity("pipeline", at("2031-05-01T10:00:00Z"));
    const header = await bearer(minted);
    const verifierAt = (iso: string) => testIdentity("agents", at(iso));
    expect(await verifierAt("2031-05-01T10:01:29Z").verify(header, AGENTS)).toBe("pipeline");
    await expectRefused(
      verifierAt("2031-05-01T10:01:31Z").verify(header, AGENTS),
      Code.Unauthenticated,
      /ERR_JWT_EXPIRED/,
    );
    // A callee whose clock is behind the caller's by more than the tolerance.
    await expectRefused(
      verifierAt("2031-05-01T09:59:29Z").verify(header, AGENTS),
      Code.Unauthenticated,
      /pipeline/,
    );
    expect(await verifierAt("2031-05-01T09:59:31Z").verify(header, AGENTS)).toBe("pipeline");
  });

  it("age out after their lifetime even when signed to live longer", async () => {
    const key = privateKeyFromSeed(testIdentities.privateKeys.pipeline);
    const iat = Date.parse("2031-05-01T10:00:00Z") / 1000;
    const longLived = await new SignJWT({})
      .setProtectedHeader({ alg: "EdDSA", typ: "avatar-service+jwt" })
      .setIssuer("pipeline")
      .setAudience(AGENTS)
      .setIssuedAt(iat)
      .setExpirationTime(iat + 86_400)
      .sign(key);
    const agents = testIdentity("agents", at("2031-05-01T10:05:00Z"));
    await expectRefused(agents.verify(`Bearer ${longLived}`, AGENTS), Code.Unauthenticated, /pipeline/);
  });

  it("are reused until 30 s before they expire, then renewed", async () => {
    let now = Date.parse("2031-05-01T10:00:00Z");
    const pipeline = testIdentity("pipeline", () => new Date(now));
    const first = await pipeline.credential(AGENTS);
    now += 29_000;
    expect(await pipeline.credential(AGENTS)).toBe(first);
    expect(await pipeline.credential(TokensService.typeName)).not.toBe(first);
    now += 2_000;
    expect(await pipeline.credential(AGENTS)).not.toBe(first);
  });
});

describe("the allow-lists", () => {
  it("name the callers of every RPC of every service, and only known callers", () => {
    for (const [name, service] of Object.entries(services) as [keyof typeof services, DescService][]) {
      const table = allowedCallers[name] as Record<string, readonly string[]>;
      expect(Object.keys(table).sort(), name).toEqual(service.methods.map((m) => m.name).sort());
      for (const callers of Object.values(table)) {
        for (const caller of callers) expect(callerNames).toContain(caller);
      }
    }
  });

  it("keep decrypted secrets, credits and signing keys to those who need them", () => {
    expect(callersOf(AGENTS, "RevealSecret")).toEqual(["pipeline", "memory"]);
    expect(callersOf(SessionsService.typeName, "GrantCredits")).toEqual(["avatarctl"]);
    expect(callersOf(TokensService.typeName, "RotateSigningKey")).toEqual(["avatarctl"]);
    expect(callersOf(TokensService.typeName, "CreateSpace")).toEqual(["avatarctl"]);
    expect(callersOf(TokensService.typeName, "MintSessionToken")).toEqual(["gateway"]);
    expect(callersOf("avatar.nope.v1.Nope", "RevealSecret")).toEqual([]);
    expect(callersOf(AGENTS, "Nope")).toEqual([]);
  });
});

/** A stand-in agents service: answers RevealSecret with a value and counts the calls that reached it. */
function revealingAgents() {
  const reached: string[] = [];
  return {
    reached,
    routes: (router: import("@connectrpc/connect").ConnectRouter) =>
      router.service(AgentsService, {
        revealSecret: (req) => {
          reached.push(req.secretId);
          return { secretValue: `value of ${req.secretId}` };
        },
      }),
  };
}

function withHeader(header: () => Promise<string>): Interceptor {
  return (next) => async (req) => {
    req.header.set("authorization", await header());
    return next(req);
  };
}

describe("requireCaller over an in-process transport", () => {
  const agents = revealingAgents();
  const { log, records } = collectingLogger();
  const transport = (interceptors: Interceptor[]): Transport =>
    createRouterTransport(agents.routes, {
      router: { interceptors: [requireCaller(testIdentity("agents"), callersOf, log)] },
      transport: { interceptors },
    });
  const client = (interceptors: Interceptor[]) => createClient(AgentsService, transport(interceptors));

  it("runs the handler for an allowed caller", async () => {
    const res = await client([presentIdentity(testIdentity("pipeline"))]).revealSecret({ secretId: "s1" });
    expect(res.secretValue).toBe("value of s1");
    expect(agents.reached).toEqual(["s1"]);
  });

  it("answers unauthenticated without a credential, and permission_denied to a caller not on the list", async () => {
    await expectRefused(client([]).revealSecret({ secretId: "s2" }), Code.Unauthenticated, "missing");
    const asGateway = withHeader(() => bearer(testIdentity("gateway")));
    await expectRefused(
      client([asGateway]).revealSecret({ secretId: "s3" }),
      Code.PermissionDenied,
      "gateway may not call AgentsService/RevealSecret",
    );
    expect(agents.reached).not.toContain("s2");
    expect(agents.reached).not.toContain("s3");
    expect(
      records()
        .filter((r) => r.msg === "service call refused")
        .map((r) => r.reason),
    ).toEqual(["missing service credential", "gateway may not call AgentsService/RevealSecret"]);
  });

  it("turns a refusal of the caller's own credential into an internal error for the caller", async () => {
    const err = await refusal(
      client([presentIdentity(testIdentity("gateway"))]).revealSecret({ secretId: "s4" }),
    );
    expect(err.code).toBe(Code.Internal);
    expect(err.rawMessage).toBe(
      "AgentsService/RevealSecret refused gateway's service identity (PermissionDenied): gateway may not call AgentsService/RevealSecret",
    );
  });
});

describe("serviceHandler on a real server", () => {
  const agents = revealingAgents();
  let listening: Listening;
  let raw: (interceptors: Interceptor[]) => Client<typeof AgentsService>;

  beforeAll(async () => {
    const server = await listen({ port: 0, host: "127.0.0.1" });
    server.setHandler(
      serviceHandler(
        { name: "agents", routes: agents.routes },
        collectingLogger().log,
        testIdentity("agents"),
      ),
    );
    listening = server;
    raw = (interceptors) =>
      createClient(
        AgentsService,
        createConnectTransport({ baseUrl: server.url, httpVersion: "1.1", interceptors }),
      );
  });
  afterAll(async () => {
    await listening.close(1_000);
  });

  it("answers a plain POST without a credential 401 with no data", async () => {
    const res = await fetch(`${listening.url}/${AGENTS}/RevealSecret`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ spaceId: "x", secretId: "plain" }),
    });
    expect(res.status).toBe(401);
    const body = (await res.json()) as { code: string; message: string };
    expect(body).toMatchObject({ code: "unauthenticated", message: "missing service credential" });
    expect(JSON.stringify(body)).not.toContain("value of");
    expect(agents.reached).toEqual([]);
  });

  it("answers each caller as its allow-list says", async () => {
    const as = (name: CallerName) => raw([withHeader(() => bearer(testIdentity(name)))]);
    expect((await as("pipeline").revealSecret({ secretId: "p" })).secretValue).toBe("value of p");
    expect((await as("memory").revealSecret({ secretId: "m" })).secretValue).toBe("value of m");
    for (const name of ["gateway", "tokens", "avatarctl"] as const) {
      await expectRefused(
        as(name).revealSecret({ secretId: name }),
        Code.PermissionDenied,
        `${name} may not call`,
      );
    }
    expect(agents.reached).toEqual(["p", "m"]);
  });

  it("keeps serving /healthz and /readyz without credentials (probes)", async () => {
    expect((await fetch(`${listening.url}/healthz`)).status).toBe(200);
    expect((await fetch(`${listening.url}/readyz`)).status).toBe(200);
  });
});

describe("identity keys and configuration", () => {
  it("round-trips a set through its env-file form, the Secret's keys", () => {
    const set = generateIdentitySet();
    const text = formatIdentitySet(set);
    expect(
      text
        .split("\n")
        .filter(Boolean)
        .map((l) => l.split("=")[0]),
    ).toEqual([...callerNames, "public-keys"]);
    expect(parseIdentitySet(text)).toEqual(set);
    expect(() => parseIdentitySet("gateway=abc\n")).toThrow(/no entry for tokens, sessions/);
  });

  it("reads public keys, several per caller while a key is replaced, and names a bad entry", () => {
    const a = generateIdentitySet();
    const b = generateIdentitySet();
    const gatewayKeys = (set: typeof a) =>
      set.publicKeys.split(",").find((e) => e.startsWith("gateway:")) ?? "";
    const keys = parsePublicKeys(`${gatewayKeys(a)}, ${gatewayKeys(b)}`);
    expect(keys.get("gateway")).toHaveLength(2);
    expect(() => parsePublicKeys("mallory:AAAA")).toThrow(/"mallory:AAAA" is not name:base64/);
    expect(() => parsePublicKeys("gateway:AAAA")).toThrow(/the key of gateway: not 32 bytes/);
  });

  it("verifies with either key of a caller during a rotation", async () => {
    const old = generateIdentitySet();
    const next = generateIdentitySet();
    const agents = identityFromKeys(
      "agents",
      next.privateKeys.agents,
      `${next.publicKeys},${old.publicKeys}`,
    );
    expect(await agents.verify(await bearer(identityOf(old, "pipeline")), AGENTS)).toBe("pipeline");
    expect(await agents.verify(await bearer(identityOf(next, "pipeline")), AGENTS)).toBe("pipeline");
  });

  it("rejects a private key that is not the named process's, or not a key", () => {
    const set = generateIdentitySet();
    expect(() => identityFromKeys("tokens", set.privateKeys.gateway, set.publicKeys)).toThrow(
      /SERVICE_IDENTITY_KEY is not tokens's key/,
    );
    expect(() => identityFromKeys("tokens", "c2hvcnQ=", set.publicKeys)).toThrow(/32 bytes in base64/);
  });

  it("takes SERVICE_IDENTITY_KEY and SERVICE_IDENTITY_PUBLIC_KEYS; a service needs both", () => {
    const set = generateIdentitySet();
    const { log } = collectingLogger();
    const env = {
      SERVICE_IDENTITY_KEY: set.privateKeys.tokens,
      SERVICE_IDENTITY_PUBLIC_KEYS: set.publicKeys,
    };
    expect(identityFromEnv("tokens", env, log, { verifiesCallers: true }).name).toBe("tokens");
    const keyOnly = { SERVICE_IDENTITY_KEY: set.privateKeys.gateway };
    expect(identityFromEnv("gateway", keyOnly, log, { verifiesCallers: false }).name).toBe("gateway");
    expect(() => identityFromEnv("tokens", keyOnly, log, { verifiesCallers: true })).toThrow(ConfigError);
    expect(() =>
      identityFromEnv("tokens", { SERVICE_IDENTITY_PUBLIC_KEYS: set.publicKeys }, log, {
        verifiesCallers: true,
      }),
    ).toThrow(/SERVICE_IDENTITY_KEY is required/);
  });

  it("adds the key of a caller the local set was written without (a new service), keeping the others", () => {
    const dir = mkdtempSync(path.join(tmpdir(), "identity-"));
    try {
      const { log } = collectingLogger();
      const old = generateIdentitySet();
      const file = localIdentityFile(dir);
      mkdirSync(path.dirname(file), { recursive: true });
      writeFileSync(file, formatIdentitySet(old).replace(/^webhooks=.*\n/m, ""));
      const now = identityFromEnv("tokens", { DATA_DIR: dir }, log, { verifiesCallers: true });
      expect(now.name).toBe("tokens");
      const set = parseIdentitySet(readFileSync(file, "utf8"));
      expect(set.privateKeys.tokens).toBe(old.privateKeys.tokens);
      expect(set.privateKeys.webhooks).not.toBe(old.privateKeys.webhooks);
      expect(set.publicKeys.split(",")).toHaveLength(callerNames.length);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("without them, shares one generated set per DATA_DIR, readable by its owner only", async () => {
    const dir = mkdtempSync(path.join(tmpdir(), "identity-"));
    try {
      const { log, records } = collectingLogger();
      const tokens = identityFromEnv("tokens", { DATA_DIR: dir }, log, { verifiesCallers: true });
      const gateway = identityFromEnv("gateway", { DATA_DIR: dir }, log, { verifiesCallers: false });
      expect(await tokens.verify(await bearer(gateway, TokensService.typeName), TokensService.typeName)).toBe(
        "gateway",
      );
      const file = localIdentityFile(dir);
      expect(statSync(file).mode & 0o777).toBe(0o600);
      expect(parseIdentitySet(readFileSync(file, "utf8")).privateKeys.tokens).toBeTruthy();
      expect(records().filter((r) => r.msg.startsWith("generated local service identities"))).toHaveLength(1);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
