import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto";

/**
 * Authenticated encryption (AES-256-GCM) for values stored at rest: provider secrets, private signing keys.
 * A sealed value names the key that sealed it, so keys rotate: new values use the current key, old ones
 * still open with theirs. `context` binds a value to its row (e.g. the secret's id): a sealed value
 * copied to another row does not open.
 */

export interface SealingKey {
  id: string;
  key: Buffer;
}

export interface Sealer {
  readonly currentKeyId: string;
  seal(plaintext: string, context: string): string;
  open(sealed: string, context: string): string;
}

const FORMAT = "v1";
const TAG_BYTES = 16;

export function createSealer(keys: SealingKey[], currentKeyId: string): Sealer {
  const byId = new Map(keys.map((k) => [k.id, k.key]));
  for (const k of keys) {
    if (k.key.length !== 32) throw new Error(`sealing key ${k.id} must be 32 bytes`);
    if (!/^[A-Za-z0-9_-]+$/.test(k.id))
      throw new Error(`sealing key id ${JSON.stringify(k.id)} is not [A-Za-z0-9_-]+`);
  }
  const current = byId.get(currentKeyId);
  if (!current) throw new Error(`no sealing key with id ${currentKeyId}`);

  return {
    currentKeyId,
    seal(plaintext, context) {
      const iv = randomBytes(12);
      const cipher = createCipheriv("aes-256-gcm", current, iv);
      cipher.setAAD(Buffer.from(context, "utf8"));
      const body = Buffer.concat([cipher.update(plaintext, "utf8"), cipher.final()]);
      return [
        FORMAT,
        currentKeyId,
        iv.toString("base64url"),
        body.toString("base64url"),
        cipher.getAuthTag().toString("base64url"),
      ].join(".");
    },
    open(sealed, context) {
      const [format, keyId, iv, body, tag] = sealed.split(".");
      if (format !== FORMAT || !keyId || iv === undefined || body === undefined || tag === undefined) {
        throw new Error("not a sealed value");
      }
      const key = byId.get(keyId);
      if (!key) throw new Error(`sealed with unknown key ${keyId}`);
      // A fixed tag length: GCM would otherwise accept a truncated tag (down to 4 bytes) and check only that.
      const decipher = createDecipheriv("aes-256-gcm", key, Buffer.from(iv, "base64url"), {
        authTagLength: TAG_BYTES,
      });
      decipher.setAAD(Buffer.from(context, "utf8"));
      decipher.setAuthTag(Buffer.from(tag, "base64url"));
      return Buffer.concat([decipher.update(Buffer.from(body, "base64url")), decipher.final()]).toString(
        "utf8",
      );
    },
  };
}

/** Parses `kid1:base64key,kid2:base64key` (the ENCRYPTION_KEYS setting). */
export function parseSealingKeys(text: string): SealingKey[] {
  return text
    .split(",")
    .map((part) => part.trim())
    .filter(Boolean)
    .map((part) => {
      const at = part.indexOf(":");
      if (at <= 0) throw new Error("ENCRYPTION_KEYS entries look like id:base64key");
      return { id: part.slice(0, at), key: Buffer.from(part.slice(at + 1), "base64") };
    });
}
