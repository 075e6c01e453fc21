import { egressUrlProblem, validationFailed } from "@avatar/runtime";

export const MAX_URL_LENGTH = 2048;

/**
 * The rules a webhook URL must meet when it is registered: at most MAX_URL_LENGTH characters and the
 * egress shape every customer URL has (runtime egressUrlProblem: absolute http(s) with a host, no user
 * name or password, no fragment). Which addresses it may reach is decided at delivery (the egress guard),
 * because a name can resolve elsewhere later. Answers the normalised URL; a refusal is a 422 on `body.url`.
 */
export function checkEndpointUrl(raw: string): string {
  const refuse = (why: string) =>
    validationFailed([{ loc: ["body", "url"], msg: `Value error, ${why}`, type: "value_error", input: raw }]);
  if (raw.length > MAX_URL_LENGTH) throw refuse(`the URL is longer than ${MAX_URL_LENGTH} characters`);
  const problem = egressUrlProblem(raw);
  if (problem) throw refuse(`the URL ${problem}`);
  return new URL(raw).href;
}
