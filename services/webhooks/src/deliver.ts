import http from "node:http";
import https from "node:https";
import type { LookupFunction } from "node:net";
import { type EgressPolicy, resolveAllowed } from "./egress.js";

/** What a receiver answered (any status), or why there was no answer. */
export type DeliveryResult = { status: number } | { error: string; refused?: boolean };

/** Sends one signed webhook. The dispatcher only knows this function; tests inject their own. */
export type Deliver = (url: string, body: string, headers: Record<string, string>) => Promise<DeliveryResult>;

/**
 * The real delivery: a POST over node's http(s), to the address egress.ts allowed (pinned through the
 * socket's lookup, so the connection goes where the check looked), no redirects followed, the whole
 * exchange bounded by `timeoutMs`. The response body is read and dropped.
 */
export function httpDeliver(options: { policy: EgressPolicy; timeoutMs: number }): Deliver {
  return async (url, body, headers) => {
    const target = new URL(url);
    let pinned: { address: string; family: 4 | 6 };
    try {
      pinned = await resolveAllowed(target.hostname, options.policy);
    } catch (err) {
      return { error: (err as Error).message, refused: true };
    }
    const lookup: LookupFunction = (_host, opts, callback) => {
      if ((opts as { all?: boolean }).all) callback(null, [pinned]);
      else callback(null, pinned.address, pinned.family);
    };
    const client = target.protocol === "https:" ? https : http;
    return new Promise<DeliveryResult>((resolve) => {
      const req = client.request(
        target,
        {
          method: "POST",
          lookup,
          headers: {
            ...headers,
            "content-type": "application/json",
            "content-length": String(Buffer.byteLength(body)),
            "user-agent": "avatar-webhooks/1",
          },
          timeout: options.timeoutMs,
        },
        (res) => {
          res.resume();
          res.on("end", () => resolve({ status: res.statusCode ?? 0 }));
          res.on("error", (err) => resolve({ error: err.message }));
        },
      );
      const deadline = setTimeout(
        () => req.destroy(new Error(`no answer within ${options.timeoutMs} ms`)),
        options.timeoutMs,
      );
      req.on("close", () => clearTimeout(deadline));
      req.on("timeout", () => req.destroy(new Error(`no answer within ${options.timeoutMs} ms`)));
      req.on("error", (err) => resolve({ error: err.message }));
      req.end(body);
    });
  };
}
