import { hash } from "node:crypto";

/**
 * The SHA-256 of `text` (UTF-8) in hex: the opaque form of a credential, ticket or key that is stored
 * or compared instead of it. node:crypto's one-shot `hash` costs about half of a Hash object's
 * create, update and digest, and a mint hashes twice.
 */
export function sha256Hex(text: string): string {
  return hash("sha256", text, "hex");
}
