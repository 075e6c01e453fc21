import { Code, ConnectError, type Interceptor } from "@connectrpc/connect";
import { rpcClientDuration, rpcClientRequests, rpcServerDuration, rpcServerRequests } from "./catalog.js";

/** `avatar.sessions.v1.SessionsService/StartSession`: the procedure label of a call. */
export function procedureOf(req: { service: { typeName: string }; method: { name: string } }): string {
  return `${req.service.typeName}/${req.method.name}`;
}

/** The Connect code of an outcome as a label: `ok`, or the code's name (`not_found`, `internal`...). */
export function codeLabel(err: unknown): string {
  if (err === undefined) return "ok";
  const code = ConnectError.from(err).code;
  return (Code[code] ?? "unknown").replace(/[A-Z]/g, (c, i) => (i === 0 ? c : `_${c}`)).toLowerCase();
}

/** Counts and times one call a service serves. */
export async function meterServed<T>(service: string, procedure: string, call: () => Promise<T>): Promise<T> {
  const stop = rpcServerDuration.startTimer({ service, procedure });
  let failure: unknown;
  try {
    return await call();
  } catch (err) {
    failure = err;
    throw err;
  } finally {
    stop();
    rpcServerRequests.inc({ service, procedure, code: codeLabel(failure) });
  }
}

/** Counts and times one call to another service. */
export async function meterCalled<T>(procedure: string, call: () => Promise<T>): Promise<T> {
  const stop = rpcClientDuration.startTimer({ procedure });
  let failure: unknown;
  try {
    return await call();
  } catch (err) {
    failure = err;
    throw err;
  } finally {
    stop();
    rpcClientRequests.inc({ procedure, code: codeLabel(failure) });
  }
}

/** Server side: every call a service serves is counted and timed. */
export function meterServedCalls(service: string): Interceptor {
  return (next) => (req) => meterServed(service, procedureOf(req), () => next(req));
}

/** Client side: every call to another service is counted and timed. */
export const meterCalls: Interceptor = (next) => (req) => meterCalled(procedureOf(req), () => next(req));
