import { createHash } from "node:crypto";

const SAFE = /^[A-Za-z0-9_-]+$/;

/**
 * A JetStream durable name for a consumer name. Names made of letters, digits, `_` and `-` are used as
 * they are; others get the unsafe characters replaced and a short hash appended, so distinct names
 * ("a.b", "a_b") stay distinct.
 */
export function durableName(consumer: string): string {
  if (SAFE.test(consumer) && consumer.length <= 64) return consumer;
  const hash = createHash("sha256").update(consumer).digest("hex").slice(0, 8);
  return `${consumer.replace(/[^A-Za-z0-9_-]/g, "_").slice(0, 48)}_${hash}`;
}
