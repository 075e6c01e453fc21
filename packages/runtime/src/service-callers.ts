import type { DescService } from "@bufbuild/protobuf";
import { type ServiceName, services } from "./clients.js";
import type { CallerName } from "./service-identity.js";

/**
 * Who may call what: for every RPC of every internal service, the identities allowed to call it. The
 * one table of the suite; each service checks it for every call (see requireCaller in service-identity).
 * The type requires an entry for every method, so a new RPC does not compile until its callers are named.
 * An empty list means no process calls it (events drive that work instead).
 */

type CallersOf<S extends DescService> = {
  readonly [K in keyof S["method"] as Capitalize<K & string>]: readonly CallerName[];
};
type CallerTable = { readonly [K in ServiceName]: CallersOf<(typeof services)[K]> };

const operator = "avatarctl";

export const allowedCallers: CallerTable = {
  tokens: {
    CreateSpace: [operator],
    GetSpace: ["gateway", operator],
    ListSpaces: [operator],
    UpdateSpace: [operator],
    CreateApiKey: [operator],
    ListApiKeys: [operator],
    RevokeApiKey: [operator],
    // A session token's start checks that the key that minted it is not revoked.
    GetApiKey: ["gateway", operator],
    // The operator checks a key it was given (the suite's demo key) the way the gateway does.
    AuthenticateApiKey: ["gateway", operator],
    GetSigningKeys: ["gateway", operator],
    RotateSigningKey: [operator],
    MintSessionToken: ["gateway"],
    MintSessionTokensBatch: ["gateway"],
    MintEmbedSessionToken: ["gateway"],
    VerifySessionToken: ["gateway", operator],
  },
  sessions: {
    CreateSession: ["tokens"],
    CreateSessionsBatch: ["tokens"],
    // The operator inspects a session (avatarctl, the chaos drills).
    GetSession: ["gateway", "memory", operator],
    ListSessions: ["gateway"],
    StartSession: ["gateway"],
    StopSession: ["gateway"],
    KeepAliveSession: ["gateway", "pipeline"],
    // The pipeline ends its sessions; tokens ends one whose creation seemed to fail (a mint's cleanup).
    EndSession: ["pipeline", "tokens"],
    // A stopping worker hands its sessions over.
    ReleaseSession: ["pipeline"],
    EndAvatarSessions: ["catalog"],
    GetSessionConfig: ["pipeline"],
    RedeemConnectTicket: ["gateway"],
    ReportConnectionState: ["pipeline"],
    AppendTranscript: ["pipeline"],
    // Webhooks checks a transcript is complete before it announces it; a worker that takes a session
    // over goes on from its transcript.
    GetTranscript: ["gateway", "memory", "webhooks", "pipeline"],
    AppendSessionEvents: ["pipeline"],
    AppendSessionEventsBatch: ["pipeline"],
    ListSessionEvents: ["gateway", operator],
    DeleteSessionEvents: ["gateway"],
    GetCredits: ["gateway", operator],
    GrantCredits: [operator],
    ListLedgerEntries: [operator],
  },
  catalog: {
    ListLanguages: ["gateway", "tokens", "agents"],
    ListLlmModels: ["gateway"],
    ListAvatars: ["gateway", operator],
    ListPublicAvatars: ["gateway", operator],
    GetAvatar: ["gateway", "tokens", "agents", operator],
    UpdateAvatar: ["gateway"],
    DeleteAvatar: ["gateway"],
    ListVoices: ["gateway", operator],
    GetVoice: ["gateway", "tokens", "agents", "pipeline", operator],
    ImportAvatars: [operator],
    ImportVoices: [operator],
    // The renderer's look (pipeline) and the picture of an avatar at rest (the gateway's preview URLs).
    GetAvatarLook: ["pipeline"],
    GetAvatarPoster: ["gateway"],
  },
  agents: {
    CreateContext: ["gateway"],
    ListContexts: ["gateway"],
    GetContext: ["gateway", "tokens"],
    UpdateContext: ["gateway"],
    DeleteContext: ["gateway"],
    CopyContext: ["gateway"],
    CreateVoiceAgent: ["gateway"],
    UpdateVoiceAgent: ["gateway"],
    ListVoiceAgents: ["gateway"],
    GetVoiceAgent: ["gateway", "tokens"],
    DeleteVoiceAgent: ["gateway"],
    CreateSecret: ["gateway"],
    ListSecrets: ["gateway", "pipeline"],
    GetSecret: ["tokens"],
    DeleteSecret: ["gateway"],
    // Decrypted values: the pipeline (provider keys) and memory (the LLM key of a space's summarizer).
    RevealSecret: ["pipeline", "memory"],
    CreateLlmConfiguration: ["gateway"],
    ListLlmConfigurations: ["gateway", "memory"],
    GetLlmConfiguration: ["gateway", "tokens", "pipeline"],
    UpdateLlmConfiguration: ["gateway"],
    DeleteLlmConfiguration: ["gateway"],
    CreateEmbed: ["gateway"],
    GetEmbed: ["gateway", "tokens"],
    UpdateEmbed: ["gateway"],
  },
  memory: {
    CreateMemory: ["gateway"],
    ListMemories: ["gateway"],
    GetMemory: ["gateway", "pipeline"],
    DeleteMemory: ["gateway"],
    ResolveMemory: ["tokens"],
    // Normally driven by the session-ended event; the operator may replay one.
    AddSessionEpisode: [operator],
  },
  pipeline: {
    ListWorkers: [operator],
    GetSessionWorker: [operator],
  },
  webhooks: {
    CreateEndpoint: ["gateway"],
    ListEndpoints: ["gateway"],
    GetEndpoint: ["gateway"],
    DeleteEndpoint: ["gateway"],
    ListDeliveries: ["gateway"],
  },
};

const serviceByTypeName = new Map<string, ServiceName>(
  (Object.entries(services) as [ServiceName, DescService][]).map(([name, desc]) => [desc.typeName, name]),
);

/** The callers allowed on one RPC (by its proto service type name and method name); none when unknown. */
export function callersOf(serviceTypeName: string, methodName: string): readonly CallerName[] {
  const service = serviceByTypeName.get(serviceTypeName);
  if (!service) return [];
  const table = allowedCallers[service] as Record<string, readonly CallerName[] | undefined>;
  return table[methodName] ?? [];
}
