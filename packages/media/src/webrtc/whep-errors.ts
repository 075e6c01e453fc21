/**
 * What can go wrong serving a WHEP viewer, typed so the gateway maps each to the contract's answer:
 * `bad_offer` -> 400, `too_many_viewers` -> 429, `unknown_viewer` -> 404.
 */
export type WhepErrorKind = "bad_offer" | "too_many_viewers" | "unknown_viewer";

export class WhepError extends Error {
  constructor(
    readonly kind: WhepErrorKind,
    message: string,
  ) {
    super(message);
    this.name = "WhepError";
  }
}

export const isWhepError = (error: unknown): error is WhepError => error instanceof WhepError;
