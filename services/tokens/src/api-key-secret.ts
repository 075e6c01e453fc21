import { randomBytes } from "node:crypto";
import { sha256Hex } from "@avatar/runtime";

/** API keys: `lak_` + 32 random bytes (base64url). Only their SHA-256 is stored; a fast hash suffices for
 * secrets of this entropy. */

export const API_KEY_PREFIX = "lak_";

export function generateApiKey(): string {
  return API_KEY_PREFIX + randomBytes(32).toString("base64url");
}

export function hashApiKey(key: string): string {
  return sha256Hex(key);
}

/** The part shown in listings to recognise a key. */
export function displayPrefix(key: string): string {
  return key.slice(0, API_KEY_PREFIX.length + 6);
}

/** Operator-chosen keys (AVATAR_DEMO_API_KEY) must still be hard to guess. */
export function isAcceptableApiKey(key: string): boolean {
  return /^[A-Za-z0-9_\-.]{24,200}$/.test(key);
}
