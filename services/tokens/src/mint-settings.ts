import { type Env, env, readConfig } from "@avatar/runtime";

/** Settings of token minting, from the environment. */
export const mintSettingsSpec = {
  /** A minted session must be started within this many seconds (the sessions service reaps it after). */
  SESSION_START_WINDOW_SECONDS: env.int({ default: 600, min: 1 }),
  /** How long a token outlives its session's longest possible end. */
  SESSION_TOKEN_GRACE_SECONDS: env.int({ default: 300, min: 0 }),
  /** Sandbox sessions run at most this long, whatever was asked. */
  SANDBOX_MAX_SESSION_DURATION: env.int({ default: 60, min: 1 }),
};

export interface MintSettings {
  startWindowSeconds: number;
  tokenGraceSeconds: number;
  sandboxMaxSeconds: number;
}

export function readMintSettings(source: Env): MintSettings {
  const c = readConfig(mintSettingsSpec, source);
  return {
    startWindowSeconds: c.SESSION_START_WINDOW_SECONDS,
    tokenGraceSeconds: c.SESSION_TOKEN_GRACE_SECONDS,
    sandboxMaxSeconds: c.SANDBOX_MAX_SESSION_DURATION,
  };
}

export const defaultMintSettings: MintSettings = {
  startWindowSeconds: 600,
  tokenGraceSeconds: 300,
  sandboxMaxSeconds: 60,
};
