import { statSync } from "node:fs";
import { AgentsService } from "@avatar/contracts/agents";
import { TokensService } from "@avatar/contracts/tokens";
import { discoveryFile, identityFromKeys, identityOf, readDiscovery } from "@avatar/runtime";
import { callOutcome, signedClient } from "@avatar/testkit";
import { Code } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestSuite, type TestSuite } from "./support.js";

/** The one-process suite checks service identities exactly as separate processes do: no bypass. */

describe("the one-process suite's service identities", () => {
  let suite: TestSuite;
  beforeAll(async () => {
    suite = await startTestSuite();
  });
  afterAll(async () => {
    await suite?.stop();
  });

  it("refuses internal calls without a credential and from callers not on the list", async () => {
    const agents = suite.serviceUrls.agents;
    const reveal = { spaceId: suite.spaceId, secretId: "00000000-0000-4000-8000-000000000000" };
    expect(await callOutcome(signedClient(AgentsService, agents).revealSecret(reveal))).toBe(
      Code.Unauthenticated,
    );
    const gateway = identityOf(suite.identities, "gateway");
    expect(await callOutcome(signedClient(AgentsService, agents, gateway).revealSecret(reveal))).toBe(
      Code.PermissionDenied,
    );
    const pipeline = identityOf(suite.identities, "pipeline");
    expect(await callOutcome(signedClient(AgentsService, agents, pipeline).revealSecret(reveal))).toBe(
      Code.NotFound,
    );
  });

  it("tells avatarctl where its services are and gives it the operator's key, readable by its owner only", async () => {
    const discovery = readDiscovery(suite.dataDir);
    expect(discovery).toMatchObject({
      pid: process.pid,
      gateway: suite.gatewayUrl,
      services: suite.serviceUrls,
    });
    expect(statSync(discoveryFile(suite.dataDir)).mode & 0o777).toBe(0o600);
    const operator = identityFromKeys("avatarctl", discovery?.operatorKey ?? "");
    const tokens = signedClient(TokensService, suite.serviceUrls.tokens, operator);
    expect(await callOutcome(tokens.createSpace({ name: "from the discovery file" }))).toBe("ok");
    const gateway = signedClient(
      TokensService,
      suite.serviceUrls.tokens,
      identityOf(suite.identities, "gateway"),
    );
    expect(await callOutcome(gateway.createSpace({ name: "not the gateway's to do" }))).toBe(
      Code.PermissionDenied,
    );
  });
});
