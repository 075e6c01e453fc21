// biome-ignore-all lint/suspicious/noTemplateCurlyInString: `${name}` placeholders are what these texts are about
/** The service behind a Connect transport (in memory) and on a real server (port 0), as others call it. */
import { AgentsService, SecretType } from "@avatar/contracts/agents";
import { CatalogService } from "@avatar/contracts/catalog";
import { AgentType } from "@avatar/contracts/common";
import {
  connectBus,
  createClients,
  errorDetailOf,
  listen,
  type RunningService,
  serviceHandler,
  startService,
} from "@avatar/runtime";
import { allowedCallerClient, testIdentity } from "@avatar/testkit";
import { Code, createClient, createRouterTransport } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { agentsModule } from "../src/index.js";
import { agentsService } from "../src/service.js";
import {
  type AgentsTestDb,
  collectingLogger,
  expectFailure,
  FakeCatalog,
  failure,
  openAgentsDb,
  SPACE_A,
  testSealer,
} from "./support.js";

let t: AgentsTestDb;

beforeAll(async () => {
  t = await openAgentsDb();
});
afterAll(async () => {
  await t.close();
});

describe("over a Connect transport", () => {
  it("serves every resource and keeps the error code and field of a failure", async () => {
    const catalog = new FakeCatalog();
    const transport = createRouterTransport((router) =>
      router.service(
        AgentsService,
        agentsService({
          db: t.db,
          catalog: catalog.client(),
          sealer: testSealer().sealer,
          log: collectingLogger().log,
        }),
      ),
    );
    const client = createClient(AgentsService, transport);
    const { context } = await client.createContext({ spaceId: SPACE_A, name: "c", prompt: "Hi ${name}" });
    expect(context?.requiredDynamicVariables).toEqual(["name"]);
    const { secret } = await client.createSecret({
      spaceId: SPACE_A,
      secretName: "k",
      secretValue: "sk-transport",
      secretType: SecretType.VENDORB_API_KEY,
    });
    const { voiceAgent } = await client.createVoiceAgent({
      spaceId: SPACE_A,
      name: "b",
      agentType: AgentType.VENDOR_B_AGENT,
      agentConfiguration: {
        configuration: { case: "vendorB", value: { secretId: secret?.id ?? "", contextId: context?.id } },
      },
    });
    expect(voiceAgent?.agentConfiguration?.configuration.case).toBe("vendorB");
    const avatar = catalog.addAvatar({ spaceId: SPACE_A });
    const { embed } = await client.createEmbed({
      spaceId: SPACE_A,
      avatarId: avatar.id,
      voiceAgentId: voiceAgent?.id,
    });
    expect(embed?.voiceAgentId).toBe(voiceAgent?.id);

    const err = await expectFailure(
      client.createVoiceAgent({
        spaceId: SPACE_A,
        name: "m",
        agentType: AgentType.MANAGED_AGENT,
        agentConfiguration: { configuration: { case: "managed", value: { voiceId: avatar.id } } },
      }),
      Code.NotFound,
      "agent_configuration.voice_id",
    );
    expect(errorDetailOf(err)?.field).toBe("agent_configuration.voice_id");
  });
});

describe("on a real server", () => {
  it("migrates, reaches the catalog over the network, seals with the configured key, and survives a restart", async () => {
    const { log } = collectingLogger();
    const catalog = new FakeCatalog();
    const catalogListening = await listen({ port: 0, host: "127.0.0.1" });
    catalogListening.setHandler(
      serviceHandler(
        { name: "catalog", routes: (r) => r.service(CatalogService, catalog.impl()) },
        log,
        testIdentity("catalog"),
      ),
    );
    const { env: keys } = testSealer("prod1");
    const start = async (): Promise<RunningService & { url: string }> => {
      const listening = await listen({ port: 0, host: "127.0.0.1" });
      const running = await startService(agentsModule, {
        databaseUrl: t.database.url,
        bus: await connectBus({}, "agents-test", log),
        log,
        clients: createClients({ catalog: catalogListening.url }, testIdentity("agents")),
        env: { ENCRYPTION_KEYS: keys },
        listening,
        identity: testIdentity("agents"),
      });
      return { ...running, url: listening.url };
    };

    let server = await start();
    try {
      let client = allowedCallerClient(AgentsService, server.url);
      const voice = catalog.addVoice({ isPublic: true });
      const { voiceAgent } = await client.createVoiceAgent({
        spaceId: SPACE_A,
        name: "m",
        agentType: AgentType.MANAGED_AGENT,
        agentConfiguration: {
          configuration: { case: "managed", value: { voiceId: voice.id, language: "en" } },
        },
      });
      expect(voiceAgent?.agentConfiguration?.configuration.case).toBe("managed");
      const { secret } = await client.createSecret({
        spaceId: SPACE_A,
        secretName: "k",
        secretValue: "sk-server",
        secretType: SecretType.VENDORA_API_KEY,
      });
      const row = await t.db
        .selectFrom("secrets")
        .selectAll()
        .where("id", "=", secret?.id ?? "")
        .executeTakeFirstOrThrow();
      expect(row.key_id).toBe("prod1");

      await server.stop();
      server = await start();
      client = allowedCallerClient(AgentsService, server.url);
      expect((await client.revealSecret({ spaceId: SPACE_A, secretId: secret?.id ?? "" })).secretValue).toBe(
        "sk-server",
      );

      // A catalog that cannot be reached is an outage, never a "not found".
      await catalogListening.close();
      const err = await failure(
        client.createVoiceAgent({
          spaceId: SPACE_A,
          name: "m",
          agentType: AgentType.MANAGED_AGENT,
          agentConfiguration: { configuration: { case: "managed", value: { voiceId: voice.id } } },
        }),
      );
      expect(err.code).not.toBe(Code.NotFound);
    } finally {
      await server.stop();
      await catalogListening.close();
    }
  });
});
