import { isUuid, notFound } from "@avatar/runtime";
import { Code, ConnectError } from "@connectrpc/connect";

/**
 * Fetches a referenced resource from another service. An id that is not a UUID, a NotFound answer and an
 * empty answer all become a 404 naming the public field the id came from.
 */
export async function lookup<T>(
  id: string,
  what: { field: string; message: string },
  fetch: () => Promise<T | undefined>,
): Promise<T> {
  const missing = () => notFound(what.message, { field: what.field });
  if (!isUuid(id)) throw missing();
  let found: T | undefined;
  try {
    found = await fetch();
  } catch (err) {
    if (err instanceof ConnectError && err.code === Code.NotFound) throw missing();
    throw err;
  }
  if (found === undefined) throw missing();
  return found;
}

/** An optional id as sent: a proto caller's empty string means "not given", like absence. */
export const givenId = (id: string | undefined): string | undefined => (id ? id : undefined);
