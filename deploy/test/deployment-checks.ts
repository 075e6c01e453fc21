import type { IDeployment } from "kubernetes-models/apps/v1";
import type { IHorizontalPodAutoscaler } from "kubernetes-models/autoscaling/v2";
import type { IIngress, INetworkPolicy } from "kubernetes-models/networking.k8s.io/v1";
import type { Resource } from "./manifests.js";
import { type Destination, egressAllowed } from "./network-policy.js";
import {
  dataServices,
  envValue,
  identitySecretName,
  isSuite,
  ofKind,
  services,
  suite,
  workloads,
} from "./workloads.js";

// Checks of what a deployment needs beyond valid objects: identities, rollouts that keep capacity and
// sessions, egress, the connection budget and one public host. One line per problem, as invariants.ts.

/** preStop + closing the bus, on top of a process's own drain. */
const CLOSE_SECONDS = 15;

/** Each Deployment reads its own service identity key, services the callers' public keys; none the operator's. */
export function identityProblems(resources: Resource[]): string[] {
  return workloads(resources)
    .filter(isSuite)
    .flatMap((w) =>
      w.containers.flatMap((c) => {
        const at = `Deployment/${w.name}`;
        const problems: string[] = [];
        const ref = (name: string) => c.env?.find((e) => e.name === name)?.valueFrom?.secretKeyRef;
        const own = ref("SERVICE_IDENTITY_KEY");
        if (!own?.name?.startsWith(identitySecretName) || own.key !== w.name)
          problems.push(`${at}: SERVICE_IDENTITY_KEY is not key ${w.name} of ${identitySecretName}`);
        const publicKeys = ref("SERVICE_IDENTITY_PUBLIC_KEYS");
        if (services.includes(w.name) && publicKeys?.key !== "public-keys")
          problems.push(
            `${at}: SERVICE_IDENTITY_PUBLIC_KEYS is not the public-keys of ${identitySecretName}`,
          );
        const all = [...(c.env ?? []).map((e) => e.valueFrom?.secretKeyRef?.key)];
        if (all.includes("avatarctl")) problems.push(`${at}: reads the operator's identity key`);
        return problems;
      }),
    );
}

/** Rollouts never lower capacity, replicas spread, and the pipeline has time to hand its sessions over. */
export function rolloutProblems(resources: Resource[]): string[] {
  const deployments = ofKind<IDeployment>(resources, "Deployment");
  return workloads(resources)
    .filter(isSuite)
    .flatMap((w) => {
      const at = `Deployment/${w.name}`;
      const problems: string[] = [];
      const strategy = deployments.find((d) => d.metadata?.name === w.name)?.spec?.strategy;
      const maxUnavailable = strategy?.rollingUpdate?.maxUnavailable;
      if (strategy?.type !== "RollingUpdate" || (maxUnavailable !== 0 && maxUnavailable !== "0%"))
        problems.push(`${at}: rollouts may take a pod away before its replacement is ready (maxUnavailable)`);
      const spread = w.template.spec?.topologySpreadConstraints ?? [];
      for (const key of ["kubernetes.io/hostname", "topology.kubernetes.io/zone"]) {
        const c = spread.find((s) => s.topologyKey === key);
        if (!c?.matchLabelKeys?.includes("app.kubernetes.io/name"))
          problems.push(`${at}: replicas are not spread over ${key} per Deployment`);
      }
      const grace = w.template.spec?.terminationGracePeriodSeconds ?? 30;
      for (const c of w.containers) {
        const drainMs = envValue(c, "PIPELINE_DRAIN_TIMEOUT_MS", resources);
        if (w.name === "pipeline" && !drainMs) problems.push(`${at}: PIPELINE_DRAIN_TIMEOUT_MS is not set`);
        if (!drainMs) continue;
        const preStop = Number(c.lifecycle?.preStop?.exec?.command?.find((arg) => /^\d+$/.test(arg)) ?? 0);
        const needed = preStop + Math.ceil(Number(drainMs) / 1000) + CLOSE_SECONDS;
        if (grace < needed)
          problems.push(
            `${at}: terminationGracePeriodSeconds ${grace} < preStop + drain + ${CLOSE_SECONDS} s (${needed})`,
          );
      }
      return problems;
    });
}

/** Autoscalers scale down slowly: the pipeline loses at most one pod per its grace period. */
export function autoscalerProblems(resources: Resource[]): string[] {
  const all = workloads(resources);
  return ofKind<IHorizontalPodAutoscaler>(resources, "HorizontalPodAutoscaler").flatMap((h) => {
    const at = `HorizontalPodAutoscaler/${h.metadata?.name}`;
    const down = h.spec?.behavior?.scaleDown;
    if (!down) return [`${at}: no scaleDown behavior (the default removes pods at once)`];
    const problems: string[] = [];
    if ((down.stabilizationWindowSeconds ?? 300) < 300)
      problems.push(`${at}: scaleDown stabilization < 300 s`);
    const target = all.find((w) => w.name === h.spec?.scaleTargetRef.name);
    const grace = target?.template.spec?.terminationGracePeriodSeconds ?? 30;
    const podPolicies = (down.policies ?? []).filter((p) => p.type === "Pods");
    const slow =
      podPolicies.length > 0 && podPolicies.every((p) => p.value === 1 && p.periodSeconds >= grace);
    if (!slow || down.selectPolicy === "Max" || (down.policies ?? []).some((p) => p.type === "Percent"))
      problems.push(`${at}: may remove more than one pod per ${grace} s (its target's grace period)`);
    return problems;
  });
}

const someProvider: Destination = { ip: "203.0.113.10" };
const metadataEndpoint: Destination = { ip: "169.254.169.254" };
const clusterAddress: Destination = { ip: "10.1.2.3" };
const dns: Destination = {
  pod: { "k8s-app": "kube-dns" },
  namespace: { "kubernetes.io/metadata.name": "kube-system" },
};

/**
 * Egress: every pod resolves names; the gateway and services reach the services; the services that
 * keep data reach Postgres and everyone NATS (the given destinations); only the pipeline and memory reach providers
 * and webhooks customers' endpoints, never a private address or the metadata endpoint.
 */
export function egressProblems(
  resources: Resource[],
  stores: { postgres: Destination; nats: Destination },
): string[] {
  const policies = ofKind<INetworkPolicy>(resources, "NetworkPolicy");
  const problems: string[] = [];
  const suitePods = workloads(resources).filter(isSuite);
  const servicePod = suitePods.find((w) => w.name === "tokens")?.labels ?? {};
  for (const w of suitePods) {
    const at = `Deployment/${w.name}`;
    const can = (to: Destination, port: number, protocol = "TCP") =>
      egressAllowed(policies, w.labels, to, port, protocol);
    if (!can(dns, 53, "UDP")) problems.push(`${at}: cannot reach the cluster DNS`);
    if (!can({ pod: servicePod }, 8080)) problems.push(`${at}: cannot reach the services`);
    if (!can(stores.nats, 4222)) problems.push(`${at}: cannot reach NATS`);
    const keepsData = dataServices.includes(w.name);
    if (keepsData !== can(stores.postgres, 5432))
      problems.push(`${at}: ${keepsData ? "cannot" : "can"} reach Postgres`);
    const callsProviders = ["pipeline", "memory", "webhooks"].includes(w.name);
    if (callsProviders !== can(someProvider, 443))
      problems.push(`${at}: ${callsProviders ? "cannot" : "can"} reach the providers (public HTTPS)`);
    for (const inside of [metadataEndpoint, clusterAddress]) {
      if ([443, 80, 8080].some((port) => can(inside, port)))
        problems.push(`${at}: can reach ${"ip" in inside ? inside.ip : "a private address"}`);
    }
  }
  if (!suite.every((name) => suitePods.some((w) => w.name === name)))
    problems.push("a Deployment is missing");
  return problems;
}

/**
 * The connection budget: every service's DATABASE_POOL_SIZE times its replicas (the autoscaler's
 * maximum where one owns the count) plus the reserve fits in Postgres's max_connections.
 */
export function connectionBudgetProblems(
  resources: Resource[],
  maxConnections: number,
  reserved: number,
): string[] {
  const hpas = ofKind<IHorizontalPodAutoscaler>(resources, "HorizontalPodAutoscaler");
  const parts: string[] = [];
  let total = reserved;
  for (const w of workloads(resources).filter((w) => isSuite(w) && dataServices.includes(w.name))) {
    const pool = Number(w.containers.map((c) => envValue(c, "DATABASE_POOL_SIZE", resources)).find(Boolean));
    if (!Number.isInteger(pool) || pool < 1) return [`Deployment/${w.name}: DATABASE_POOL_SIZE is not set`];
    const hpa = hpas.find((h) => h.spec?.scaleTargetRef.name === w.name);
    const replicas = hpa?.spec?.maxReplicas ?? w.replicas ?? 1;
    total += pool * replicas;
    parts.push(`${w.name} ${replicas}x${pool}`);
  }
  return total <= maxConnections
    ? []
    : [
        `${parts.join(" + ")} + ${reserved} reserved = ${total} connections > max_connections ${maxConnections}`,
      ];
}

/** One public host everywhere it appears, and TLS from a Certificate (no Secret made by hand). */
export function publicEndpointProblems(resources: Resource[]): string[] {
  const hosts = new Map<string, string | undefined>();
  const ingress = ofKind<IIngress>(resources, "Ingress")[0];
  if (ingress) {
    hosts.set("Ingress rule", ingress.spec?.rules?.[0]?.host);
    hosts.set("Ingress TLS", ingress.spec?.tls?.[0]?.hosts?.[0]);
  }
  const route = resources.find((r) => r.kind === "HTTPRoute") as
    | { spec?: { hostnames?: string[] } }
    | undefined;
  if (route) hosts.set("HTTPRoute", route.spec?.hostnames?.[0]);
  const certificate = resources.find((r) => r.kind === "Certificate") as
    | { spec?: { dnsNames?: string[]; secretName?: string } }
    | undefined;
  if (certificate) hosts.set("Certificate", certificate.spec?.dnsNames?.[0]);
  const gateway = workloads(resources).find((w) => w.name === "gateway")?.containers[0];
  const publicUrl = gateway && envValue(gateway, "PUBLIC_BASE_URL", resources);
  hosts.set("PUBLIC_BASE_URL", publicUrl ? new URL(publicUrl).hostname : undefined);
  const problems: string[] = [];
  const distinct = new Set(hosts.values());
  if (distinct.size !== 1 || distinct.has(undefined))
    problems.push(`public hosts disagree: ${[...hosts].map(([k, v]) => `${k} ${v}`).join(", ")}`);
  for (const tls of ingress?.spec?.tls ?? []) {
    if (tls.secretName !== certificate?.spec?.secretName)
      problems.push(`Ingress TLS Secret ${tls.secretName} is not made by a Certificate`);
  }
  if (publicUrl && !publicUrl.startsWith("https://")) problems.push("PUBLIC_BASE_URL is not https");
  const backends = (route as { spec?: { rules?: { backendRefs?: { name: string }[] }[] } } | undefined)?.spec
    ?.rules;
  for (const ref of (backends ?? []).flatMap((r) => r.backendRefs ?? [])) {
    if (ref.name !== "gateway") problems.push(`HTTPRoute backend ${ref.name} is not the gateway`);
  }
  return problems;
}
