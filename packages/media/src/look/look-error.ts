/** A look the renderer cannot draw, naming the field at fault (decode-look.ts says why). */
export class LookError extends Error {
  constructor(
    readonly field: string,
    message: string,
  ) {
    super(`${field}: ${message}`);
    this.name = "LookError";
  }
}
