/** Helpers shared by the runtime tests. */

// The runtime cannot name @avatar/testkit (the testkit depends on the runtime), so it uses the file directly.
export { sentStatements } from "../../testkit/src/generic-plans.js";
export { collectingLogger, type LogRecord } from "../../testkit/src/logs.js";
export { createTestDatabase, type TestDatabase } from "../../testkit/src/postgres.js";
export { type Gate, gate, nextTurn, settledWithin, sleep, waitFor } from "../../testkit/src/waits.js";

import { ConnectError } from "@connectrpc/connect";
import { expect } from "vitest";
import { generateIdentitySet, identityOf } from "../src/identity-keys.js";
import type { CallerName } from "../src/service-identity.js";

/** This file's service identities (the testkit's testIdentity, which the runtime cannot import). */
export const testIdentities = generateIdentitySet();
export const testIdentity = (name: CallerName, now?: () => Date) => identityOf(testIdentities, name, now);

/** The ConnectError a call failed with (the test fails when it did not fail with one). */
export async function caught(promise: Promise<unknown>): Promise<ConnectError> {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ConnectError);
  return err as ConnectError;
}
