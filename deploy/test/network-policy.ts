import { BlockList, isIP } from "node:net";
import type { INetworkPolicy } from "kubernetes-models/networking.k8s.io/v1";
import type { IContainerPort } from "kubernetes-models/v1";

type Labels = Record<string, string>;
type Selector = NonNullable<INetworkPolicy["spec"]>["podSelector"];
type Rule = { ports?: { protocol?: string; port?: number | string }[] };
type Peer = NonNullable<NonNullable<NonNullable<INetworkPolicy["spec"]>["ingress"]>[number]["from"]>[number];

export function selects(selector: Selector | undefined, labels: Labels): boolean {
  if (!selector) return false;
  const exact = Object.entries(selector.matchLabels ?? {}).every(([k, v]) => labels[k] === v);
  return (
    exact &&
    (selector.matchExpressions ?? []).every(({ key, operator, values = [] }) => {
      const value = labels[key];
      if (operator === "In") return value !== undefined && values.includes(value);
      if (operator === "NotIn") return value === undefined || !values.includes(value);
      if (operator === "Exists") return value !== undefined;
      if (operator === "DoesNotExist") return value === undefined;
      return false;
    })
  );
}

/** A pod as the policies see it: its labels and its named container ports. */
export interface Pod {
  labels: Labels;
  ports: IContainerPort[];
}

/**
 * Who opens the connection: a pod of the same namespace, a pod of another namespace with these labels on
 * the namespace (a monitoring namespace), or anyone outside (ingress controller, internet: an unlabelled
 * namespace or no pod at all).
 */
export type Source = { pod: Labels } | { namespace: Labels } | "outside";

function appliesTo(policy: INetworkPolicy, pod: Labels, direction: "Ingress" | "Egress"): boolean {
  const spec = policy.spec;
  if (!spec || !selects(spec.podSelector, pod)) return false;
  const types = spec.policyTypes ?? (spec.egress ? ["Ingress", "Egress"] : ["Ingress"]);
  return types.includes(direction);
}

function portMatches(rule: Rule, target: Pod | undefined, port: number, protocol: string): boolean {
  if (!rule.ports || rule.ports.length === 0) return true;
  return rule.ports.some((p) => {
    if ((p.protocol ?? "TCP") !== protocol) return false;
    if (p.port === undefined) return true;
    if (typeof p.port === "number") return p.port === port;
    return target?.ports.some((c) => c.name === p.port && c.containerPort === port) ?? false;
  });
}

/**
 * An ipBlock peer counts as admitting anyone (this suite uses none), so a check that something is
 * unreachable can only err on the safe side. A namespaceSelector peer admits pods of the namespaces it
 * selects; "outside" stands for a namespace without labels, which only an empty selector selects.
 */
function peerAdmits(peer: Peer, source: Source): boolean {
  if (peer.ipBlock) return true;
  if (peer.namespaceSelector) {
    const namespace = source === "outside" ? {} : "namespace" in source ? source.namespace : undefined;
    return namespace !== undefined && selects(peer.namespaceSelector, namespace) && !peer.podSelector;
  }
  return source !== "outside" && "pod" in source && selects(peer.podSelector, source.pod);
}

/** Whether the policies let `source` reach `port` (TCP unless told) of `target` (policies are additive). */
export function ingressAllowed(
  policies: INetworkPolicy[],
  target: Pod,
  source: Source,
  port: number,
  protocol = "TCP",
): boolean {
  const applying = policies.filter((p) => appliesTo(p, target.labels, "Ingress"));
  if (applying.length === 0) return true;
  return applying.some((policy) =>
    (policy.spec?.ingress ?? []).some(
      (rule) =>
        portMatches(rule, target, port, protocol) &&
        (!rule.from || rule.from.length === 0 || rule.from.some((peer) => peerAdmits(peer, source))),
    ),
  );
}

/** Whether the pod may still send DNS queries under its egress policies: a rule for UDP 53 or for any port. */
export function dnsEgressAllowed(policies: INetworkPolicy[], pod: Labels): boolean {
  const applying = policies.filter((p) => appliesTo(p, pod, "Egress"));
  if (applying.length === 0) return true;
  return applying.some((policy) =>
    (policy.spec?.egress ?? []).some((rule) => portMatches(rule, undefined, 53, "UDP")),
  );
}

/** Where a connection goes: a pod of this namespace, a pod of another (by the namespace's labels), or an address. */
export type Destination = { pod: Labels; namespace?: Labels } | { ip: string };

type EgressPeer = NonNullable<
  NonNullable<NonNullable<INetworkPolicy["spec"]>["egress"]>[number]["to"]
>[number];

function inCidr(ip: string, cidr: string): boolean {
  const [base = "", bits = ""] = cidr.split("/");
  const family = isIP(base);
  if (family === 0 || family !== isIP(ip)) return false;
  const list = new BlockList();
  list.addSubnet(base, Number(bits || (family === 6 ? 128 : 32)), family === 6 ? "ipv6" : "ipv4");
  return list.check(ip, family === 6 ? "ipv6" : "ipv4");
}

function egressPeerAdmits(peer: EgressPeer, to: Destination): boolean {
  if ("ip" in to) {
    const block = peer.ipBlock;
    return !!block && inCidr(to.ip, block.cidr) && !(block.except ?? []).some((e) => inCidr(to.ip, e));
  }
  if (peer.ipBlock) return false;
  if (peer.namespaceSelector) {
    if (!to.namespace || !selects(peer.namespaceSelector, to.namespace)) return false;
  } else if (to.namespace) {
    return false;
  }
  return !peer.podSelector || selects(peer.podSelector, to.pod);
}

/** Whether the policies let a pod open a connection to `to` on `port` (policies are additive). */
export function egressAllowed(
  policies: INetworkPolicy[],
  from: Labels,
  to: Destination,
  port: number,
  protocol = "TCP",
): boolean {
  const applying = policies.filter((p) => appliesTo(p, from, "Egress"));
  if (applying.length === 0) return true;
  return applying.some((policy) =>
    (policy.spec?.egress ?? []).some(
      (rule) =>
        egressPortMatches(rule, port, protocol) &&
        (!rule.to || rule.to.length === 0 || rule.to.some((peer) => egressPeerAdmits(peer, to))),
    ),
  );
}

function egressPortMatches(
  rule: { ports?: { protocol?: string; port?: number | string; endPort?: number }[] },
  port: number,
  protocol: string,
): boolean {
  if (!rule.ports || rule.ports.length === 0) return true;
  return rule.ports.some((p) => {
    if ((p.protocol ?? "TCP") !== protocol) return false;
    if (p.port === undefined) return true;
    if (typeof p.port !== "number") return false;
    return p.endPort === undefined ? p.port === port : port >= p.port && port <= p.endPort;
  });
}
