/**
 * The shape every URL a customer gives us for our servers to call must have: http or https, a host, no
 * user name or password (they would travel as credentials, and hide the real host from a quick look),
 * and no fragment (a `#` in a base URL moves every path appended to it out of the request).
 */

export class EgressError extends Error {
  constructor(
    message: string,
    /** invalid_url: the URL's shape; address_not_allowed: where it leads; unresolvable: DNS failed. */
    readonly reason: "invalid_url" | "address_not_allowed" | "unresolvable",
  ) {
    super(message);
    this.name = "EgressError";
  }
}

/** What is wrong with `raw` as an egress URL (a sentence), or undefined when nothing is. */
export function egressUrlProblem(raw: string): string | undefined {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return "must be an absolute http or https URL";
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") return "must be an http or https URL";
  if (url.hostname === "") return "must name a host";
  if (url.username !== "" || url.password !== "") return "must not contain a user name or password";
  if (url.href.includes("#")) return "must not contain a fragment (#)";
  return undefined;
}

/** The URL, normalised by the WHATWG parser; EgressError("invalid_url") when it has a problem. */
export function parseEgressUrl(raw: string | URL): URL {
  const text = typeof raw === "string" ? raw : raw.href;
  const problem = egressUrlProblem(text);
  if (problem) throw new EgressError(`the URL ${problem}`, "invalid_url");
  return new URL(text);
}

/**
 * `base` with `path` appended to its path (the query, if any, is kept where it belongs):
 * `https://h/v1?x=1` + `chat/completions` is `https://h/v1/chat/completions?x=1`.
 */
export function appendPath(base: string | URL, path: string): URL {
  const url = new URL(typeof base === "string" ? base : base.href);
  url.pathname = `${url.pathname.replace(/\/+$/, "")}/${path.replace(/^\/+/, "")}`;
  url.hash = "";
  return url;
}
