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

/** Server side: every call a service serves is counted and timed. */
export function meterServedCalls(service: string): Interceptor {
  return (next) => async (req) => {
    const procedure = procedureOf(req);
    const stop = rpcServerDuration.startTimer({ service, procedure });
    let failure: unknown;
    try {
      return await next(req);
    } catch (err) {
      failure = err;
      throw err;
    } finally {
      stop();
      rpcServerRequests.inc({ service, procedure, code: codeLabel(failure) });
    }
  };
}

/** Client side: every call to another service is counted and timed. */
export const meterCalls: Interceptor = (next) => async (req) => {
  const procedure = procedureOf(req);
  const stop = rpcClientDuration.startTimer({ procedure });
  let failure: unknown;
  try {
    return await next(req);
  } catch (err) {
    failure = err;
    throw err;
  } finally {
    stop();
    rpcClientRequests.inc({ procedure, code: codeLabel(failure) });
  }
};
