import { randomUUID } from "node:crypto";
import { AgentsService, type SecretType } from "@avatar/contracts/agents";
import { CatalogService } from "@avatar/contracts/catalog";
import { MemoryService, MemoryType } from "@avatar/contracts/memory";
import { type Clients, services } from "@avatar/runtime";
import { timestampFromMs } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError, createClient, createRouterTransport } from "@connectrpc/connect";

/**
 * In-memory stand-ins for the agents, catalog and memory services, answering only the calls the pipeline
 * makes (the rest are unimplemented), served through Connect's router transport so requests and answers
 * are real protobuf messages. Like the real services they answer NotFound for another space's records.
 * Calls are counted so tests can see what was revealed.
 */
export class FakeServices {
  readonly secrets: {
    id: string;
    spaceId: string;
    type: SecretType;
    value: string;
    createdMs: number;
    allowedHosts: string[];
  }[] = [];
  readonly llmConfigurations: {
    id: string;
    spaceId: string;
    modelName: string;
    baseUrl: string;
    secretId: string;
  }[] = [];
  readonly voices: { id: string; providerVoiceIds: Record<string, string> }[] = [];
  readonly memories: { id: string; spaceId: string; content: string }[] = [];
  readonly calls: string[] = [];
  /** Make the memory service fail. */
  memoryDown = false;
  readonly clients: Clients;

  constructor() {
    const transport = createRouterTransport((router) => {
      router.service(AgentsService, {
        listSecrets: (req) => {
          this.calls.push("listSecrets");
          return {
            secrets: this.secrets
              .filter((s) => s.spaceId === req.spaceId)
              .map((s) => ({
                id: s.id,
                spaceId: s.spaceId,
                secretName: `key ${s.id.slice(0, 4)}`,
                secretType: s.type,
                createdAt: timestampFromMs(s.createdMs),
              })),
          };
        },
        revealSecret: (req) => {
          this.calls.push(`revealSecret ${req.secretId}`);
          const s = this.secrets.find((x) => x.id === req.secretId && x.spaceId === req.spaceId);
          if (!s) throw new ConnectError("Secret not found", Code.NotFound);
          return {
            secret: { id: s.id, spaceId: s.spaceId, secretType: s.type, allowedHosts: s.allowedHosts },
            secretValue: s.value,
          };
        },
        getLlmConfiguration: (req) => {
          const c = this.llmConfigurations.find(
            (x) => x.id === req.llmConfigurationId && x.spaceId === req.spaceId,
          );
          if (!c) throw new ConnectError("LLM configuration not found", Code.NotFound);
          return { llmConfiguration: { ...c, displayName: "mine" } };
        },
      });
      router.service(CatalogService, {
        getVoice: (req) => {
          const v = this.voices.find((x) => x.id === req.voiceId);
          if (!v) throw new ConnectError("Voice not found", Code.NotFound);
          return {
            voice: {
              id: v.id,
              name: "Voice",
              voiceEngines: Object.keys(v.providerVoiceIds),
              providerVoiceIds: v.providerVoiceIds,
            },
          };
        },
      });
      router.service(MemoryService, {
        getMemory: (req) => {
          if (this.memoryDown) throw new ConnectError("memory is down", Code.Unavailable);
          const m = this.memories.find((x) => x.id === req.memoryId && x.spaceId === req.spaceId);
          if (!m) throw new ConnectError("Memory not found", Code.NotFound);
          return {
            memory: {
              id: m.id,
              spaceId: m.spaceId,
              memoryType: MemoryType.SESSION,
              memoryContent: m.content,
            },
          };
        },
      });
    });
    this.clients = Object.fromEntries(
      Object.entries(services).map(([name, service]) => [name, createClient(service, transport)]),
    ) as unknown as Clients;
  }

  addSecret(
    spaceId: string,
    type: SecretType,
    value: string,
    createdMs = Date.now(),
    allowedHosts: string[] = [],
  ): string {
    const id = randomUUID();
    this.secrets.push({ id, spaceId, type, value, createdMs, allowedHosts });
    return id;
  }

  addVoice(providerVoiceIds: Record<string, string>): string {
    const id = randomUUID();
    this.voices.push({ id, providerVoiceIds });
    return id;
  }

  addMemory(spaceId: string, content: string): string {
    const id = randomUUID();
    this.memories.push({ id, spaceId, content });
    return id;
  }

  addLlmConfiguration(spaceId: string, c: { modelName: string; baseUrl: string; secretId: string }): string {
    const id = randomUUID();
    this.llmConfigurations.push({ id, spaceId, ...c });
    return id;
  }
}
