export {
  checkEgressTarget,
  createEgressFetch,
  type EgressFetch,
  type EgressRequestInit,
  type Resolve,
  type ResolvedAddress,
} from "./fetch.js";
export { type Cidr, cidrContains, type IpAddress, isPublicIp, parseCidr, parseIp } from "./ip.js";
export {
  EGRESS_ALLOW,
  type EgressPolicy,
  egressAllowEntries,
  egressPolicy,
  isAllowedAddress,
  isTrustedTarget,
  readEgressPolicy,
} from "./policy.js";
export { appendPath, EgressError, egressUrlProblem, parseEgressUrl } from "./url.js";
