import { type MsgHdrs, headers as natsHeaders } from "@nats-io/transport-node";
import type { BusHeaders } from "../bus.js";

/** Headers starting with this are NATS's own (Nats-Msg-Id, ...) and are not passed to handlers. */
const RESERVED_PREFIX = "nats-";

export function toNatsHeaders(headers: BusHeaders | undefined): MsgHdrs | undefined {
  const entries = Object.entries(headers ?? {});
  if (entries.length === 0) return undefined;
  const out = natsHeaders();
  for (const [key, value] of entries) out.set(key, value);
  return out;
}

export function fromNatsHeaders(headers: MsgHdrs | undefined): BusHeaders {
  const out: BusHeaders = {};
  if (!headers) return out;
  for (const [key, values] of headers) {
    if (key.toLowerCase().startsWith(RESERVED_PREFIX)) continue;
    out[key] = values.at(-1) ?? "";
  }
  return out;
}
