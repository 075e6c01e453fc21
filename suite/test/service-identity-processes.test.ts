import { AgentsService } from "@avatar/contracts/agents";
import { TokensService } from "@avatar/contracts/tokens";
import { generateIdentitySet, identityOf } from "@avatar/runtime";
import {
  callOutcome,
  createTestDatabase,
  serviceSpecs,
  signedClient,
  spawnEntry,
  spawnTopology,
  type TestDatabase,
  type Topology,
  topologyEnv,
} from "@avatar/testkit";
import { Code } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

/**
 * Service identity across processes, as deployed: tokens and agents each in its own process with its
 * own key (SERVICE_IDENTITY_KEY) and every caller's public key (SERVICE_IDENTITY_PUBLIC_KEYS).
 */

const SPACE = "0a000000-0000-4000-8000-00000000000a";
const MISSING = "00000000-0000-4000-8000-000000000000";

describe("service identity across processes", () => {
  let db: TestDatabase;
  let topology: Topology;

  beforeAll(async () => {
    db = await createTestDatabase();
    topology = await spawnTopology(serviceSpecs("tokens", "agents", "catalog"), topologyEnv(db.url));
  }, 120_000);
  afterAll(async () => {
    await topology?.stop();
    await db?.drop();
  });

  it("refuses a call without a credential, or signed with a key the deployment does not trust", async () => {
    const agents = topology.url("agents");
    const reveal = { spaceId: SPACE, secretId: MISSING };
    expect(await callOutcome(signedClient(AgentsService, agents).revealSecret(reveal))).toBe(
      Code.Unauthenticated,
    );
    const impostor = identityOf(generateIdentitySet(), "pipeline");
    expect(await callOutcome(signedClient(AgentsService, agents, impostor).revealSecret(reveal))).toBe(
      Code.Unauthenticated,
    );
  });

  it("lets only the allowed callers through: RevealSecret for the pipeline, CreateSpace for the operator", async () => {
    const agents = topology.url("agents");
    const tokens = topology.url("tokens");
    const reveal = { spaceId: SPACE, secretId: MISSING };
    expect(
      await callOutcome(
        signedClient(AgentsService, agents, topology.identity("gateway")).revealSecret(reveal),
      ),
    ).toBe(Code.PermissionDenied);
    // Past the identity check, the handler answers: there is no such secret.
    expect(
      await callOutcome(
        signedClient(AgentsService, agents, topology.identity("pipeline")).revealSecret(reveal),
      ),
    ).toBe(Code.NotFound);
    const space = { name: "identity" };
    expect(
      await callOutcome(signedClient(TokensService, tokens, topology.identity("gateway")).createSpace(space)),
    ).toBe(Code.PermissionDenied);
    expect(
      await callOutcome(
        signedClient(TokensService, tokens, topology.identity("avatarctl")).createSpace(space),
      ),
    ).toBe("ok");
  });

  it("a service given another process's key does not start", async () => {
    const wrong = spawnEntry("tokens-wrong-key", "services/tokens/src/main.ts", {
      DATABASE_URL: db.url,
      PORT: "0",
      SERVICE_IDENTITY_KEY: topology.identities.privateKeys.gateway,
      SERVICE_IDENTITY_PUBLIC_KEYS: topology.identities.publicKeys,
    });
    expect(await new Promise((resolve) => wrong.child.once("exit", resolve))).toBe(2);
    expect(wrong.output()).toMatch(/SERVICE_IDENTITY_KEY is not tokens's key/);
  }, 60_000);
});
