import { validationFailed } from "@avatar/runtime";

export const MAX_URL_LENGTH = 2048;

/**
 * The rules a webhook URL must meet when it is registered: an absolute http(s) URL with a host, no
 * user name or password in it (credentials belong in the signature, and would be logged), no fragment
 * (never sent to a server). Which addresses it may reach is decided at delivery (egress.ts), because a
 * name can resolve elsewhere later. Answers the normalised URL; a refusal is a 422 on `body.url`.
 */
export function checkEndpointUrl(raw: string): string {
  const refuse = (why: string) =>
    validationFailed([{ loc: ["body", "url"], msg: `Value error, ${why}`, type: "value_error", input: raw }]);
  if (raw.length > MAX_URL_LENGTH) throw refuse(`the URL is longer than ${MAX_URL_LENGTH} characters`);
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw refuse("not an absolute URL");
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") throw refuse("the URL must be http or https");
  if (!url.hostname) throw refuse("the URL has no host");
  if (url.username || url.password) throw refuse("the URL must not carry a user name or password");
  if (url.hash || raw.includes("#")) throw refuse("the URL must not have a fragment (#...)");
  return url.href;
}
