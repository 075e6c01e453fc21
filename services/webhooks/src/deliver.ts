import {
  EgressError,
  type EgressFetch,
  type EgressPolicy,
  type Env,
  egressAllowEntries,
  egressPolicy,
} from "@avatar/runtime";

/** What a receiver answered (any status), or why there was no answer. */
export type DeliveryResult = { status: number } | { error: string; refused?: boolean };

/** Sends one signed webhook. The dispatcher only knows this function; tests inject their own. */
export type Deliver = (url: string, body: string, headers: Record<string, string>) => Promise<DeliveryResult>;

/**
 * Where webhooks may go: public addresses and whatever EGRESS_ALLOW adds (the runtime's egress guard),
 * plus loopback receivers when the operator allows them for development. The operator's own provider
 * URLs are not trusted here: a customer's webhook has no business with them.
 */
export function webhookEgressPolicy(env: Env, allowLoopback: boolean): EgressPolicy {
  return egressPolicy({
    allow: [...egressAllowEntries(env), ...(allowLoopback ? ["127.0.0.0/8", "::1/128"] : [])],
  });
}

/**
 * The real delivery: a POST through the egress guard's fetch (the connection goes to the address it
 * checked, no redirects followed), the whole exchange bounded by `timeoutMs`. The response body is read
 * and dropped. An address the guard refuses is a refusal; anything else (DNS, network, timeout) a failure
 * that is retried.
 */
export function httpDeliver(options: { fetch: EgressFetch; timeoutMs: number }): Deliver {
  return async (url, body, headers) => {
    try {
      const res = await options.fetch(url, {
        method: "POST",
        headers: { ...headers, "content-type": "application/json", "user-agent": "avatar-webhooks/1" },
        body,
        signal: AbortSignal.timeout(options.timeoutMs),
      });
      await res.arrayBuffer();
      return { status: res.status };
    } catch (err) {
      const refused = err instanceof EgressError && err.reason !== "unresolvable";
      const message =
        err instanceof Error && err.name === "TimeoutError"
          ? `no answer within ${options.timeoutMs} ms`
          : err instanceof Error
            ? err.message
            : String(err);
      return refused ? { error: message, refused } : { error: message };
    }
  };
}
