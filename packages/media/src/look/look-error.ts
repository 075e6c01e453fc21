/** A look input refused, naming the field at fault. */
export abstract class LookFieldError extends Error {
  constructor(
    readonly field: string,
    message: string,
  ) {
    super(`${field}: ${message}`);
  }
}

/** A look the renderer cannot draw (decode-look.ts says why). */
export class LookError extends LookFieldError {
  override name = "LookError";
}
