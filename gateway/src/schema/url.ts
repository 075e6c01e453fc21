import { failure, issue, type Loc, type ParseResult, success } from "./issues.js";
import type { JsonSchema } from "./json-schema.js";
import { charLength, joinOr, plural, pyReprString } from "./py-format.js";
import { Schema } from "./schema.js";

export interface UrlOptions {
  /** Accepted schemes, lower case, e.g. ["http", "https"]. Any scheme when absent. */
  schemes?: readonly string[];
  /** Longest accepted input, in characters. */
  maxLength?: number;
}

const SPECIAL = new Set(["http", "https", "ws", "wss", "ftp", "file"]);

/** WHATWG "ends in a number": such a host must be an IPv4 address. */
function endsInNumber(host: string): boolean {
  const labels = host.split(".");
  if (labels[labels.length - 1] === "" && labels.length > 1) labels.pop();
  const last = labels[labels.length - 1] ?? "";
  return /^\d+$/.test(last) || /^0[xX][0-9a-fA-F]*$/.test(last);
}

/** The standard drops surrounding C0 controls and spaces, and every tab or newline, before parsing. */
function stripForParsing(input: string): string {
  let start = 0;
  let end = input.length;
  while (start < end && input.charCodeAt(start) <= 0x20) start++;
  while (end > start && input.charCodeAt(end - 1) <= 0x20) end--;
  return input.slice(start, end).replace(/[\t\n\r]/g, "");
}

/**
 * The reason Rust's url crate (used by pydantic) gives for a URL that Node's WHATWG parser refused.
 * Both implement the WHATWG URL standard; the reason is reconstructed from the part that failed.
 */
function explain(input: string): string {
  const text = stripForParsing(input);
  const scheme = /^([A-Za-z][A-Za-z0-9+.-]*):/.exec(text);
  if (!scheme) return "relative URL without a base";
  const name = (scheme[1] ?? "").toLowerCase();
  const special = SPECIAL.has(name);
  let rest = text.slice(scheme[0].length);
  if (special) rest = rest.replace(/^[/\\]*/, "");
  else if (rest.startsWith("//")) rest = rest.slice(2);
  else return "relative URL without a base";
  const authority = rest.split(special ? /[/\\?#]/ : /[/?#]/)[0] ?? "";
  const hostAndPort = authority.slice(authority.lastIndexOf("@") + 1);
  let host = hostAndPort;
  let port: string | undefined;
  if (hostAndPort.startsWith("[")) {
    const close = hostAndPort.indexOf("]");
    if (close < 0) return "invalid IPv6 address";
    host = hostAndPort.slice(0, close + 1);
    if (hostAndPort.length > close + 1) port = hostAndPort.slice(close + 2);
  } else if (hostAndPort.includes(":")) {
    host = hostAndPort.slice(0, hostAndPort.indexOf(":"));
    port = hostAndPort.slice(hostAndPort.indexOf(":") + 1);
  }
  // The host is parsed before the port, so its faults come first.
  if (host === "" && special) return "empty host";
  if (!URL.canParse(`${special ? "http" : "foo"}://${host}/`)) {
    if (host.startsWith("[")) return "invalid IPv6 address";
    if (special && endsInNumber(host)) return "invalid IPv4 address";
    return special ? "invalid international domain name" : "invalid domain character";
  }
  if (port !== undefined && port !== "" && (!/^\d+$/.test(port) || Number(port) > 65535)) {
    return "invalid port number";
  }
  return special ? "invalid international domain name" : "invalid domain character";
}

/** pydantic `AnyUrl`/`HttpUrl`: the parsed value is the normalised URL (`http://x.com` -> `http://x.com/`). */
export class UrlSchema extends Schema<string> {
  constructor(readonly options: UrlOptions = {}) {
    super();
  }

  protected check(input: unknown, loc: Loc): ParseResult<string> {
    if (typeof input !== "string")
      return failure(issue("url_type", loc, "URL input should be a string or URL", input));
    const { maxLength, schemes } = this.options;
    if (maxLength !== undefined && charLength(input) > maxLength) {
      const msg = `URL should have at most ${maxLength} ${plural(maxLength, "character")}`;
      return failure(issue("url_too_long", loc, msg, input, { max_length: maxLength }));
    }
    let url: URL | undefined;
    try {
      url = input === "" ? undefined : new URL(input);
    } catch {
      url = undefined;
    }
    if (url === undefined) {
      const error = input === "" ? "input is empty" : explain(input);
      return failure(issue("url_parsing", loc, `Input should be a valid URL, ${error}`, input, { error }));
    }
    const scheme = url.protocol.slice(0, -1);
    if (schemes !== undefined && !schemes.includes(scheme)) {
      const expected = joinOr(schemes.map(pyReprString));
      return failure(
        issue("url_scheme", loc, `URL scheme should be ${expected}`, input, { expected_schemes: expected }),
      );
    }
    return success(url.href);
  }

  protected kindLabel(): string {
    // pydantic wraps its URL types in a function validator, and a union loc shows that wrapper.
    return "function-wrap[wrap_val()]";
  }

  protected kindJsonSchema(): JsonSchema {
    const { maxLength } = this.options;
    return { type: "string", format: "uri", minLength: 1, ...(maxLength === undefined ? {} : { maxLength }) };
  }
}

export const url = (options?: UrlOptions): UrlSchema => new UrlSchema(options);

/** pydantic `HttpUrl`: http or https, at most 2083 characters. */
export const httpUrl = (): UrlSchema => new UrlSchema({ schemes: ["http", "https"], maxLength: 2083 });
