import { type Env, env, readConfig } from "@avatar/runtime";

/**
 * Settings of token minting, from the environment. The start window and the sandbox cap are the sessions
 * service's settings of the same names: one value drives both the token's lifetime and the reaper.
 */
export const mintSettingsSpec = {
  /** A minted session must be started within this long (the sessions service reaps it after). */
  SESSION_START_TIMEOUT_MS: env.int({ default: 600_000, min: 100, max: 86_400_000 }),
  /** How long a token outlives its session's longest possible end. */
  SESSION_TOKEN_GRACE_SECONDS: env.int({ default: 300, min: 0 }),
  /** Sandbox sessions run at most this long, whatever was asked. */
  SESSION_SANDBOX_MAX_DURATION_MS: env.int({ default: 60_000, min: 100, max: 3_600_000 }),
  /** ES256 presignatures kept ready by a thread of their own (presign/presigner.ts); 0: none. */
  SESSION_TOKEN_PRESIGNATURES: env.int({ default: 1024, min: 0, max: 65_536 }),
};

export interface MintSettings {
  startWindowSeconds: number;
  tokenGraceSeconds: number;
  sandboxMaxSeconds: number;
  /** The presignature pool (SESSION_TOKEN_PRESIGNATURES). */
  presignatures: number;
}

export function readMintSettings(source: Env): MintSettings {
  const c = readConfig(mintSettingsSpec, source);
  return {
    startWindowSeconds: Math.ceil(c.SESSION_START_TIMEOUT_MS / 1000),
    tokenGraceSeconds: c.SESSION_TOKEN_GRACE_SECONDS,
    sandboxMaxSeconds: Math.max(1, Math.ceil(c.SESSION_SANDBOX_MAX_DURATION_MS / 1000)),
    presignatures: c.SESSION_TOKEN_PRESIGNATURES,
  };
}

export const defaultMintSettings: MintSettings = {
  startWindowSeconds: 600,
  tokenGraceSeconds: 300,
  sandboxMaxSeconds: 60,
  presignatures: 0,
};
