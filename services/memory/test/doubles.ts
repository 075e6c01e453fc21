/**
 * Test doubles of the services the memory service calls, speaking their real contracts: a
 * SessionsService that knows GetSession and GetTranscript, and an AgentsService that knows
 * ListLlmConfigurations and RevealSecret. Everything else they are asked answers Unimplemented.
 */
import {
  type AgentsService,
  type LlmConfiguration,
  LlmConfigurationSchema,
  SecretSchema,
  SecretType,
} from "@avatar/contracts/agents";
import { SessionMode } from "@avatar/contracts/common";
import {
  type Session,
  SessionSchema,
  SessionState,
  type SessionsService,
  type TranscriptEntry,
  TranscriptEntrySchema,
} from "@avatar/contracts/sessions";
import { notFound, toTimestamp } from "@avatar/runtime";
import { create, type MessageInitShape } from "@bufbuild/protobuf";
import type { ServiceImpl } from "@connectrpc/connect";

interface StoredSession {
  session: Session;
  entries: TranscriptEntry[];
}

/** Sessions kept in memory; GetTranscript answers at most `pageSize` entries per call, as a paging peer may. */
export class SessionsServiceDouble {
  readonly sessions = new Map<string, StoredSession>();
  getSessionCalls = 0;
  /** When set, every call fails with this error (a sessions service that is down). */
  failWith: Error | undefined;

  constructor(readonly pageSize = 2) {}

  add(
    fields: MessageInitShape<typeof SessionSchema> & { id: string; spaceId: string },
    transcript: string[][] = [],
  ): Session {
    const session = create(SessionSchema, {
      state: SessionState.ENDED,
      mode: SessionMode.FULL,
      createdAt: toTimestamp(new Date()),
      ...fields,
    });
    const start = 1_790_000_000_000n;
    const entries = transcript.map(([role, text], i) =>
      create(TranscriptEntrySchema, {
        role,
        transcript: text,
        absoluteTimestamp: start + BigInt(i * 1000),
        relativeTimestamp: BigInt(i * 1000),
        entryId: `${fields.id}-${i}`,
      }),
    );
    this.sessions.set(session.id, { session, entries });
    return session;
  }

  impl(): Partial<ServiceImpl<typeof SessionsService>> {
    const find = (spaceId: string, sessionId: string) => {
      if (this.failWith) throw this.failWith;
      const stored = this.sessions.get(sessionId);
      if (!stored || stored.session.spaceId !== spaceId) {
        throw notFound("Session not found", { field: "session_id" });
      }
      return stored;
    };
    return {
      getSession: (req) => {
        this.getSessionCalls++;
        return { session: find(req.spaceId, req.sessionId).session };
      },
      getTranscript: (req) => {
        const { session, entries } = find(req.spaceId, req.sessionId);
        const from = req.startTimestamp ?? 0n;
        const page = entries
          .filter((e) => e.absoluteTimestamp >= from)
          .filter((e) => req.endTimestamp === undefined || e.absoluteTimestamp < req.endTimestamp)
          .slice(0, this.pageSize);
        const last = page.at(-1);
        return {
          sessionActive: session.state !== SessionState.ENDED,
          entries: page,
          nextTimestamp: last ? last.absoluteTimestamp + 1n : from,
        };
      },
    };
  }
}

/** LLM configurations and secrets of spaces, kept in memory. */
export class AgentsServiceDouble {
  readonly configurations: LlmConfiguration[] = [];
  readonly secrets = new Map<string, { spaceId: string; value: string; allowedHosts: string[] }>();
  revealCalls = 0;

  addConfiguration(
    fields: MessageInitShape<typeof LlmConfigurationSchema> & { spaceId: string; secretId: string },
    secretValue?: string,
    /** The hosts the secret is bound to; the tests' model servers listen on 127.0.0.1. */
    allowedHosts: string[] = ["127.0.0.1"],
  ): LlmConfiguration {
    const configuration = create(LlmConfigurationSchema, {
      id: crypto.randomUUID(),
      displayName: "My model",
      modelName: "gpt-test",
      ...fields,
    });
    this.configurations.push(configuration);
    if (secretValue !== undefined)
      this.secrets.set(fields.secretId, { spaceId: fields.spaceId, value: secretValue, allowedHosts });
    return configuration;
  }

  impl(): Partial<ServiceImpl<typeof AgentsService>> {
    return {
      listLlmConfigurations: (req) => ({
        llmConfigurations: this.configurations.filter((c) => c.spaceId === req.spaceId),
      }),
      revealSecret: (req) => {
        this.revealCalls++;
        const secret = this.secrets.get(req.secretId);
        if (!secret || secret.spaceId !== req.spaceId)
          throw notFound("Secret not found", { field: "secret_id" });
        return {
          secretValue: secret.value,
          secret: create(SecretSchema, {
            id: req.secretId,
            spaceId: secret.spaceId,
            secretType: SecretType.VENDORB_API_KEY,
            allowedHosts: secret.allowedHosts,
          }),
        };
      },
    };
  }
}
