import { egressUrlProblem, invalidRequest, isUuid, notFound } from "@avatar/runtime";

/**
 * Input checks of the service itself, for every caller (the gateway validates the public shapes first,
 * with 422s; an internal caller that skips it gets a 400 naming the field, never a database error).
 */

/** A text of `min`..`max` characters (code points, as the public API counts). */
export function checkText(value: string, field: string, min: number, max: number): string {
  const length = [...value].length;
  if (length < min || length > max) {
    throw invalidRequest(`${field} must have ${min} to ${max} characters`, { field });
  }
  return value;
}

/** A name: surrounding spaces dropped, then 1..max characters. */
export function checkName(value: string, field: string, max: number): string {
  return checkText(value.trim(), field, 1, max);
}

/** An http(s) URL. */
export function checkHttpUrl(value: string, field: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw invalidRequest(`${field} must be an http or https URL`, { field });
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw invalidRequest(`${field} must be an http or https URL`, { field });
  }
  return value;
}

/** A URL our servers will call (an LLM configuration's base_url): the egress guard's shape rules. */
export function checkEgressUrl(value: string, field: string): string {
  const problem = egressUrlProblem(value);
  if (problem) throw invalidRequest(`${field} ${problem}`, { field });
  return value;
}

/** The id of a resource to look up: anything but a UUID cannot exist. */
export function lookupId(value: string, what: string, field: string): string {
  if (!isUuid(value)) throw missingResource(what, field);
  return value.toLowerCase();
}

/** 404 naming the field, so a caller knows which of several ids of a body was not found. */
export function missingResource(what: string, field: string) {
  return notFound(`${what} not found: ${field}`, { field });
}
