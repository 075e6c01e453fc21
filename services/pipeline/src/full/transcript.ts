import { randomUUID } from "node:crypto";
import type { SessionContext } from "../realtime/mode.js";

export type Role = "user" | "avatar";

/** When a turn began: transcript entries are stamped with it, not with the time they are written. */
export interface TurnStart {
  absoluteMs: number;
  relativeMs: number;
}

export function turnStart(ctx: SessionContext): TurnStart {
  return { absoluteMs: ctx.now(), relativeMs: ctx.sinceStart() };
}

/** Writes one turn (only what was actually said) through the sessions service; empty turns are not written. */
export function writeTurn(ctx: SessionContext, role: Role, text: string, at: TurnStart): void {
  const transcript = text.trim();
  if (!transcript) return;
  ctx.appendTranscript([
    {
      entryId: randomUUID(),
      role,
      transcript,
      absoluteTimestamp: BigInt(Math.round(at.absoluteMs)),
      relativeTimestamp: BigInt(Math.max(0, Math.round(at.relativeMs))),
    },
  ]);
}
