/** The public response envelope: `code` 100 on success, HTTP status x 10 on error, `data` null on error. */

export interface Envelope<T = unknown> {
  code: number;
  data: T | null;
  message: string;
}

export function success<T>(data: T, message = "Success"): Envelope<T> {
  return { code: 100, data, message };
}

export function failure(status: number, message: string): Envelope<null> {
  return { code: status * 10, data: null, message };
}
