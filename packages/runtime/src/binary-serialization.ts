import type { DescMethod } from "@bufbuild/protobuf";
import { createMethodSerializationLookup, validateReadWriteMaxBytes } from "@connectrpc/connect/protocol";

const serializations = new WeakMap<DescMethod, ReturnType<typeof createMethodSerializationLookup>>();

/**
 * connect's own binary serialization of a method's messages (its limits and its wording of a failure),
 * made once per method.
 */
export function binarySerialization(method: DescMethod) {
  let lookup = serializations.get(method);
  if (!lookup) {
    lookup = createMethodSerializationLookup(
      method,
      undefined,
      undefined,
      validateReadWriteMaxBytes(undefined, undefined, undefined),
    );
    serializations.set(method, lookup);
  }
  return { input: lookup.getI(true), output: lookup.getO(true) };
}
