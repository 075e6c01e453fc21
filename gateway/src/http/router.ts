/**
 * Matches method and path against route patterns like `/v1/avatars/{avatar_id}`. The pattern itself
 * names the endpoint for rate limiting, so path parameters never split a counter.
 */

export interface Match<R> {
  route: R;
  params: Record<string, string>;
  /** The endpoint the rate limit counts: the method and the pattern (`POST /v1/sessions/{session_id}`). */
  endpoint: string;
}

interface Compiled<R> {
  method: string;
  regex: RegExp;
  names: string[];
  route: R;
  endpoint: string;
}

export type RouteLookup<R> =
  | { kind: "found"; match: Match<R> }
  | { kind: "method_not_allowed"; allow: string[] }
  | { kind: "not_found" };

export class Router<R extends { method: string; path: string }> {
  private readonly compiled: Compiled<R>[];

  constructor(routes: readonly R[]) {
    this.compiled = routes.map((route) => {
      const names: string[] = [];
      const source = route.path
        .split("/")
        .map((segment) => {
          const param = /^\{([a-z_]+)\}$/.exec(segment);
          if (!param?.[1]) return segment.replace(/[.*+?^$()|[\]\\]/g, "\\$&");
          names.push(param[1]);
          return "([^/]+)";
        })
        .join("/");
      return {
        method: route.method,
        regex: new RegExp(`^${source}/?$`),
        names,
        route,
        endpoint: `${route.method} ${route.path}`,
      };
    });
  }

  lookup(method: string, path: string): RouteLookup<R> {
    const allow: string[] = [];
    for (const c of this.compiled) {
      const m = c.regex.exec(path);
      if (!m) continue;
      if (c.method !== method) {
        allow.push(c.method);
        continue;
      }
      const params: Record<string, string> = {};
      c.names.forEach((name, i) => {
        params[name] = safeDecode(m[i + 1] ?? "");
      });
      return { kind: "found", match: { route: c.route, params, endpoint: c.endpoint } };
    }
    return allow.length > 0 ? { kind: "method_not_allowed", allow } : { kind: "not_found" };
  }
}

function safeDecode(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}
