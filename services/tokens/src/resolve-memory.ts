import type { MemoryRef } from "@avatar/contracts/common";
import { type Clients, errorDetailOf, invalidRequest, isUuid, notFound } from "@avatar/runtime";
import { Code, ConnectError } from "@connectrpc/connect";

const PREV = "memory.prev_session_id";
const ATTACH = "memory.session_memory_id";

/** Which public field a NotFound of the memory service is about. */
function notFoundField(err: ConnectError, ref: MemoryRef): string {
  const field = errorDetailOf(err)?.field ?? "";
  if (field.includes("session_memory_id") || field === "memory_id") return ATTACH;
  if (field.includes("prev_session_id") || field === "session_id") return PREV;
  if (ref.sessionMemoryId === undefined) return PREV;
  if (ref.prevSessionId === undefined) return ATTACH;
  return "memory";
}

/**
 * The memory a FULL session attaches ("" for none): `prev_session_id` reuses or creates the memory of
 * that session, `session_memory_id` names one of the space's memories; when both are given they must
 * resolve to the same memory (interface.md rule 6). Called last, after every other check, because
 * resolving a prev_session_id may create a memory.
 */
export async function resolveMemory(
  memory: Clients["memory"],
  spaceId: string,
  ref: MemoryRef | undefined,
): Promise<string> {
  if (!ref || (ref.prevSessionId === undefined && ref.sessionMemoryId === undefined)) return "";
  if (ref.prevSessionId !== undefined && !isUuid(ref.prevSessionId)) {
    throw notFound("Session not found", { field: PREV });
  }
  if (ref.sessionMemoryId !== undefined && !isUuid(ref.sessionMemoryId)) {
    throw notFound("Memory not found", { field: ATTACH });
  }
  let resolved: Awaited<ReturnType<Clients["memory"]["resolveMemory"]>>;
  try {
    resolved = await memory.resolveMemory({
      spaceId,
      prevSessionId: ref.prevSessionId,
      sessionMemoryId: ref.sessionMemoryId,
    });
  } catch (err) {
    if (err instanceof ConnectError && err.code === Code.NotFound) {
      const field = notFoundField(err, ref);
      throw notFound(field === PREV ? "Session not found" : "Memory not found", { field });
    }
    throw err;
  }
  const id = resolved.memory?.id;
  if (!id) throw notFound("Memory not found", { field: ref.sessionMemoryId ? ATTACH : PREV });
  if (ref.sessionMemoryId !== undefined && ref.prevSessionId !== undefined && id !== ref.sessionMemoryId) {
    throw invalidRequest(
      "memory.prev_session_id and memory.session_memory_id resolve to different memories",
      {
        field: "memory",
      },
    );
  }
  return id;
}
