import type { IncomingMessage } from "node:http";
import { missing, type ParseResult, type ValidationIssue } from "../schema/issues.js";
import { parseJsonBody } from "../schema/json-body.js";
import { nulIssues, nulParamIssues } from "../schema/nul.js";
import { readBody } from "./body.js";
import { HttpError } from "./http-error.js";
import type { Route } from "./route.js";

export interface ParsedRequest {
  params: unknown;
  query: unknown;
  body: unknown;
}

/**
 * Validates path, query and body of a request together, as FastAPI does: all their issues come back in
 * one 422. A body that is not JSON stops there (json_invalid), like FastAPI. A route with an optional
 * body treats no body (or JSON null) as an empty object. A NUL character in any string of the request
 * is refused first, for every route (schema/nul.ts).
 */
export async function parseRequest(
  route: Route,
  req: IncomingMessage,
  rawParams: Record<string, string>,
  search: URLSearchParams,
  maxBodyBytes: number,
): Promise<ParseResult<ParsedRequest>> {
  const issues: ValidationIssue[] = [];
  const take = <T>(result: ParseResult<T> | undefined, fallback: T): T => {
    if (!result) return fallback;
    if (result.ok) return result.value;
    issues.push(...result.issues);
    return fallback;
  };

  const nul = nulParamIssues(rawParams, "path");
  if (search.size > 0) nul.push(...nulParamIssues(search, "query"));
  if (nul.length > 0) return { ok: false, issues: nul };
  const text = route.textBody ? await readTextBody(req, route.textBody, maxBodyBytes) : undefined;
  const decoded =
    route.body && !route.textBody ? parseJsonBody(await readBody(req, maxBodyBytes)) : undefined;
  if (decoded?.ok) nul.push(...nulIssues(decoded.value, ["body"]));
  if (nul.length > 0) return { ok: false, issues: nul };

  const params = take(route.params?.parse(rawParams), rawParams as unknown);
  const query = take(route.query?.parse(search), {} as unknown);
  let body: unknown = text;
  if (route.body && decoded) {
    const absent = decoded.ok ? decoded.value === null : decoded.reason === "empty";
    if (absent && route.optionalBody) {
      body = take(route.body.parse({}), undefined);
    } else if (!decoded.ok) {
      return { ok: false, issues: decoded.issues };
    } else if (decoded.value === null) {
      issues.push(missing(["body"], null));
    } else {
      body = take(route.body.parse(decoded.value), undefined);
    }
  }
  return issues.length > 0 ? { ok: false, issues } : { ok: true, value: { params, query, body } };
}

/** A text body of the route's media type (parameters such as charset aside). */
async function readTextBody(req: IncomingMessage, mediaType: string, maxBodyBytes: number): Promise<string> {
  const given = (req.headers["content-type"] ?? "").split(";")[0]?.trim().toLowerCase();
  if (given !== mediaType) {
    throw new HttpError(415, `Content-Type must be ${mediaType}`, undefined, { Accept: mediaType });
  }
  const text = (await readBody(req, maxBodyBytes)).toString("utf8");
  if (text.trim() === "") throw new HttpError(400, `The body must be ${mediaType}`);
  return text;
}
