import { existsSync } from "node:fs";
import path from "node:path";
import { nodeFlagsFor } from "@avatar/build/node-flags";
import { PROCESSES } from "@avatar/build/processes";
import type { IHorizontalPodAutoscaler } from "kubernetes-models/autoscaling/v2";
import type { IIngress, INetworkPolicy } from "kubernetes-models/networking.k8s.io/v1";
import type { IPodDisruptionBudget } from "kubernetes-models/policy/v1";
import type { IContainer, IProbe, IService } from "kubernetes-models/v1";
import { deployDir, type Resource } from "./manifests.js";
import { dnsEgressAllowed, ingressAllowed, selects } from "./network-policy.js";
import {
  dataServices,
  envValue,
  externalSecrets,
  hasLabels,
  isMediaServer,
  isSuite,
  ofKind,
  sealingServices,
  secretName,
  services,
  suite,
  type Workload,
  workloads,
} from "./workloads.js";

// Each check returns one line per problem, so a failing test says exactly what is wrong where.

/** How long a process may take to drain in-flight requests after SIGTERM, plus closing the bus. */
const drainSeconds = 10 + 5;

/** Every workload (the suite, the dev data stores, operator Jobs): non-root, locked down, limited, probed (Jobs need no probes). */
export function podSecurityProblems(resources: Resource[]): string[] {
  return workloads(resources).flatMap((w) => {
    const pod = w.template.spec?.securityContext;
    return w.containers.flatMap((c) => {
      const at = `${w.kind}/${w.name} container ${c.name}`;
      const sc = c.securityContext ?? {};
      const problems: string[] = [];
      if ((sc.runAsNonRoot ?? pod?.runAsNonRoot) !== true) problems.push(`${at}: runAsNonRoot is not true`);
      if ((sc.runAsUser ?? pod?.runAsUser) === 0) problems.push(`${at}: runs as user 0`);
      if (sc.allowPrivilegeEscalation !== false)
        problems.push(`${at}: allowPrivilegeEscalation is not false`);
      if (!sc.capabilities?.drop?.includes("ALL")) problems.push(`${at}: does not drop ALL capabilities`);
      const { limits, requests } = c.resources ?? {};
      if (!limits?.cpu || !limits.memory) problems.push(`${at}: no cpu and memory limits`);
      if (!requests?.cpu || !requests.memory) problems.push(`${at}: no cpu and memory requests`);
      const serves = w.kind !== "Job";
      if (serves && (!c.livenessProbe || !c.readinessProbe))
        problems.push(`${at}: lacks a liveness or readiness probe`);
      return problems;
    });
  });
}

/** Each of the seven processes has its Deployment. */
export function missingComponentProblems(resources: Resource[]): string[] {
  const present = workloads(resources).filter(isSuite);
  return suite
    .filter((name) => !present.some((w) => w.name === name))
    .map((name) => `no Deployment for ${name}`);
}

/** The suite's Deployments: /healthz and /readyz on the port the process listens on, read-only root, drain time. */
export function suiteDeploymentProblems(resources: Resource[]): string[] {
  return workloads(resources)
    .filter(isSuite)
    .flatMap((w) => {
      const at = `Deployment/${w.name}`;
      const problems: string[] = [];
      const volumes = w.template.spec?.volumes ?? [];
      const grace = w.template.spec?.terminationGracePeriodSeconds ?? 30;
      for (const c of w.containers) {
        const port = Number(envValue(c, "PORT", resources));
        if (!c.ports?.some((p) => p.containerPort === port))
          problems.push(`${at}: PORT ${port} is not a container port`);
        if (envValue(c, "HOST", resources) !== "0.0.0.0") problems.push(`${at}: HOST is not 0.0.0.0`);
        problems.push(...probeProblems(at, "liveness", c.livenessProbe, "/healthz", c, port));
        problems.push(...probeProblems(at, "readiness", c.readinessProbe, "/readyz", c, port));
        if (c.securityContext?.readOnlyRootFilesystem !== true)
          problems.push(`${at}: root filesystem is writable`);
        const tmp = c.volumeMounts?.find((m) => m.mountPath === "/tmp");
        if (!volumes.some((v) => v.name === tmp?.name && v.emptyDir))
          problems.push(`${at}: /tmp is not an emptyDir`);
        const preStop = Number(c.lifecycle?.preStop?.exec?.command?.find((arg) => /^\d+$/.test(arg)) ?? 0);
        if (grace < preStop + drainSeconds) {
          problems.push(
            `${at}: terminationGracePeriodSeconds ${grace} < preStop ${preStop} s + ${drainSeconds} s`,
          );
        }
      }
      return problems;
    });
}

function probeProblems(
  at: string,
  kind: string,
  probe: IProbe | undefined,
  path: string,
  c: IContainer,
  port: number,
): string[] {
  const get = probe?.httpGet;
  if (get?.path !== path) return [`${at}: ${kind} probe is not GET ${path}`];
  const target =
    typeof get.port === "number" ? get.port : c.ports?.find((p) => p.name === get.port)?.containerPort;
  return target === port ? [] : [`${at}: ${kind} probe port ${get.port} is not PORT ${port}`];
}

/** The bundle a suite Deployment runs (`gateway/dist/main.js`, `services/<name>/dist/main.js`). */
export const bundleOf = (name: string): string =>
  name === "gateway" ? "gateway/dist/main.js" : `services/${name}/dist/main.js`;

/** How a bundle is run: node with that process's flags (tools/build/src/node-flags.ts). */
export const nodeCommand = (main: string): string[] => ["node", ...nodeFlagsFor(main), main];

/**
 * Every container whose node runs with `--initial-old-space-size=N` (MB) may use at least 2N MiB: V8 lets
 * the old space fill to N before its first full collection, with the young generation, the code and the
 * ArrayBuffers besides, and a lower limit ends the process first.
 */
export function oldSpaceMemoryProblems(resources: Resource[]): string[] {
  return workloads(resources).flatMap((w) =>
    w.containers.flatMap((c) => {
      const oldSpace = initialOldSpaceMb(c.command ?? []);
      if (oldSpace === undefined) return [];
      const limit = mebibytes(c.resources?.limits?.memory);
      return limit !== undefined && limit >= 2 * oldSpace
        ? []
        : [
            `${w.kind}/${w.name}: memory limit ${c.resources?.limits?.memory ?? "none"} < twice --initial-old-space-size=${oldSpace}`,
          ];
    }),
  );
}

/** The MB of a command's `--initial-old-space-size`, if it sets one (NaN when its value is no number). */
export function initialOldSpaceMb(command: readonly string[]): number | undefined {
  const flag = command.find((arg) => arg.startsWith("--initial-old-space-size="));
  return flag === undefined ? undefined : Number(flag.slice("--initial-old-space-size=".length));
}

const QUANTITY_UNITS: Record<string, number> = {
  "": 1,
  k: 1e3,
  M: 1e6,
  G: 1e9,
  Ki: 2 ** 10,
  Mi: 2 ** 20,
  Gi: 2 ** 30,
};

/** A Kubernetes memory quantity (`512Mi`, `1Gi`, `1G`, bytes) in MiB; undefined when it is none of those. */
export function mebibytes(quantity: string | number | undefined): number | undefined {
  const match = /^(\d+(?:\.\d+)?)(|k|M|G|Ki|Mi|Gi)$/.exec(String(quantity ?? ""));
  const unit = QUANTITY_UNITS[match?.[2] ?? "?"];
  return match && unit !== undefined ? (Number(match[1]) * unit) / 2 ** 20 : undefined;
}

/** Commands, secrets and service URLs of the suite's processes. */
export function suiteEnvironmentProblems(resources: Resource[]): string[] {
  const serviceObjects = ofKind<IService>(resources, "Service");
  return workloads(resources)
    .filter(isSuite)
    .flatMap((w) =>
      w.containers.flatMap((c) => {
        const at = `Deployment/${w.name}`;
        const problems: string[] = [];
        const command = nodeCommand(bundleOf(w.name)).join(" ");
        if (c.command?.join(" ") !== command) problems.push(`${at}: command is not ${command}`);
        const wantSecrets = [
          "NATS_URL",
          ...(dataServices.includes(w.name) ? ["DATABASE_URL"] : []),
          ...(sealingServices.includes(w.name) ? ["ENCRYPTION_KEYS"] : []),
        ];
        for (const key of wantSecrets) {
          const ref = c.env?.find((e) => e.name === key)?.valueFrom?.secretKeyRef;
          if (ref?.key !== key || !ref.name?.startsWith(secretName))
            problems.push(`${at}: ${key} is not a secretKeyRef`);
        }
        for (const name of services) {
          const url = envValue(c, `${name.toUpperCase()}_URL`, resources);
          const parsed = url ? new URL(url) : undefined;
          const target = serviceObjects.find((s) => s.metadata?.name === parsed?.hostname);
          if (!target?.spec?.ports?.some((p) => p.port === Number(parsed?.port || 80))) {
            problems.push(`${at}: ${name.toUpperCase()}_URL (${url}) is not a Service port`);
          }
        }
        return problems;
      }),
    );
}

/** The entry files the commands name exist in the repository. */
export function entryFileProblems(resources: Resource[]): string[] {
  const repo = path.resolve(deployDir, "..");
  const bundled = new Set(PROCESSES.map((p) => `${p.dir}/dist/main.js`));
  return workloads(resources)
    .filter(isSuite)
    .flatMap((w) => w.containers.map((c) => c.command?.at(-1) ?? ""))
    .flatMap((file) => {
      if (!bundled.has(file)) return [`${file} is not a bundle that pnpm build makes (tools/build)`];
      const source = file.replace(/\/dist\/main\.js$/, "/src/main.ts");
      return existsSync(path.join(repo, source)) ? [] : [`${source} does not exist in the repository`];
    });
}

/** ConfigMap and Secret references resolve; a Secret not rendered must be the documented external one. */
export function referenceProblems(resources: Resource[]): string[] {
  const find = (kind: string, name: string | undefined) =>
    resources.find((r) => r.kind === kind && r.metadata.name === name);
  return workloads(resources).flatMap((w) =>
    w.containers.flatMap((c) => {
      const at = `${w.kind}/${w.name} container ${c.name}`;
      const problems: string[] = [];
      for (const from of c.envFrom ?? []) {
        if (from.configMapRef && !find("ConfigMap", from.configMapRef.name)) {
          problems.push(`${at}: ConfigMap ${from.configMapRef.name} is not defined`);
        }
      }
      for (const e of c.env ?? []) {
        const ref = e.valueFrom?.secretKeyRef;
        if (!ref) continue;
        const secret = find("Secret", ref.name);
        const keys = secret
          ? Object.keys({ ...(secret.data as object), ...(secret.stringData as object) })
          : (externalSecrets[ref.name ?? ""] ?? []);
        if (!secret && !externalSecrets[ref.name ?? ""])
          problems.push(`${at}: Secret ${ref.name} is neither defined nor documented`);
        else if (!keys.includes(ref.key) && !ref.optional)
          problems.push(`${at}: Secret ${ref.name} has no key ${ref.key}`);
      }
      return problems;
    }),
  );
}

/** Every Service selects pods that exist, on a port they declare, and stays inside the cluster. */
export function serviceProblems(resources: Resource[]): string[] {
  const all = workloads(resources);
  return ofKind<IService>(resources, "Service").flatMap((s) => {
    const at = `Service/${s.metadata?.name}`;
    const selector = s.spec?.selector ?? {};
    const pods = all.filter((w) => Object.keys(selector).length > 0 && hasLabels(w.labels, selector));
    if (pods.length === 0) return [`${at}: selects no pods`];
    const problems: string[] = [];
    if ((s.spec?.type ?? "ClusterIP") !== "ClusterIP")
      problems.push(`${at}: type ${s.spec?.type} exposes it`);
    for (const p of s.spec?.ports ?? []) {
      const target = p.targetPort ?? p.port;
      const declared = pods.every((w) =>
        w.containers.some((c) => c.ports?.some((cp) => cp.name === target || cp.containerPort === target)),
      );
      if (!declared) problems.push(`${at}: targetPort ${target} is not a port of the selected pods`);
    }
    return problems;
  });
}

/** Ingresses lead to the gateway only. */
export function ingressProblems(resources: Resource[]): string[] {
  return ofKind<IIngress>(resources, "Ingress").flatMap((ing) => {
    const backends = [
      ing.spec?.defaultBackend,
      ...(ing.spec?.rules ?? []).flatMap((r) => r.http?.paths.map((p) => p.backend) ?? []),
    ].filter((b) => b !== undefined);
    return backends
      .filter((b) => b.service?.name !== "gateway")
      .map(
        (b) => `Ingress/${ing.metadata?.name}: backend ${b.service?.name ?? "(resource)"} is not the gateway`,
      );
  });
}

/** Disruption budgets never block a drain (maxUnavailable, not minAvailable) and select existing pods. */
export function disruptionBudgetProblems(resources: Resource[]): string[] {
  const all = workloads(resources);
  return ofKind<IPodDisruptionBudget>(resources, "PodDisruptionBudget").flatMap((pdb) => {
    const at = `PodDisruptionBudget/${pdb.metadata?.name}`;
    const { maxUnavailable, minAvailable, selector } = pdb.spec ?? {};
    const problems: string[] = [];
    if (minAvailable !== undefined) problems.push(`${at}: uses minAvailable`);
    if (maxUnavailable === undefined || maxUnavailable === 0 || maxUnavailable === "0%") {
      problems.push(`${at}: maxUnavailable must allow one eviction`);
    }
    if (!all.some((w) => selects(selector, w.labels))) problems.push(`${at}: selects no pods`);
    return problems;
  });
}

/** Each suite Deployment runs at least `min` replicas: its own count, or an autoscaler that owns the count. */
export function replicaProblems(resources: Resource[], min: number): string[] {
  const hpas = ofKind<IHorizontalPodAutoscaler>(resources, "HorizontalPodAutoscaler");
  const all = workloads(resources);
  const orphans = hpas
    .filter(
      (h) =>
        !all.some((w) => w.kind === h.spec?.scaleTargetRef.kind && w.name === h.spec?.scaleTargetRef.name),
    )
    .map((h) => `HorizontalPodAutoscaler/${h.metadata?.name}: its target does not exist`);
  return [
    ...orphans,
    ...all.filter(isSuite).flatMap((w) => {
      const hpa = hpas.find(
        (h) => h.spec?.scaleTargetRef.kind === "Deployment" && h.spec.scaleTargetRef.name === w.name,
      );
      if (!hpa)
        return (w.replicas ?? 1) >= min ? [] : [`Deployment/${w.name}: ${w.replicas ?? 1} replicas < ${min}`];
      const problems: string[] = [];
      if ((hpa.spec?.minReplicas ?? 1) < min)
        problems.push(`Deployment/${w.name}: autoscaler minReplicas < ${min}`);
      if (w.replicas !== undefined)
        problems.push(`Deployment/${w.name}: sets replicas although an autoscaler owns them`);
      if (!w.containers.every((c) => c.resources?.requests?.cpu))
        problems.push(`Deployment/${w.name}: no cpu request`);
      return problems;
    }),
  ];
}

/** The labels of the namespace Prometheus scrapes from (base/network-policies.yaml). */
const MONITORING = { "avatar.example/monitoring": "true" };

/**
 * Network policies: the gateway and a transportA media server (clients join its rooms) are reachable
 * from outside on every port they declare, UDP included; the services only from the suite; metrics
 * ports only from the monitoring namespace; nothing else from outside; and every pod can still resolve
 * names.
 */

export function networkProblems(resources: Resource[]): string[] {
  const policies = ofKind<INetworkPolicy>(resources, "NetworkPolicy");
  const all = workloads(resources);
  const gateway = all.find((w) => w.name === "gateway" && isSuite(w));
  const stranger = { pod: { "app.kubernetes.io/name": "stranger" } };
  const problems: string[] = [];
  for (const w of all) {
    const pod = { labels: w.labels, ports: w.containers.flatMap((c) => c.ports ?? []) };
    const at = `${w.kind}/${w.name}`;
    if (!dnsEgressAllowed(policies, w.labels)) problems.push(`${at}: egress policies block DNS`);
    for (const { containerPort, name, protocol = "TCP" } of pod.ports) {
      const fromOutside = ingressAllowed(policies, pod, "outside", containerPort, protocol);
      if (name === "metrics") {
        // Prometheus only: from the monitoring namespace, never from outside or from any pod here.
        if (fromOutside) problems.push(`${at}: metrics port ${containerPort} is reachable from outside`);
        if (ingressAllowed(policies, pod, stranger, containerPort))
          problems.push(`${at}: metrics port ${containerPort} is reachable from any pod of the namespace`);
        if (isSuite(w) && !ingressAllowed(policies, pod, { namespace: MONITORING }, containerPort))
          problems.push(
            `${at}: metrics port ${containerPort} is not reachable from the monitoring namespace`,
          );
        continue;
      }
      if (w === gateway || isMediaServer(w)) {
        if (!fromOutside) {
          problems.push(`${at}: port ${containerPort}/${protocol} is not reachable from outside`);
        }
        continue;
      }
      if (fromOutside) problems.push(`${at}: port ${containerPort} is reachable from outside the namespace`);
      if (ingressAllowed(policies, pod, stranger, containerPort)) {
        problems.push(`${at}: port ${containerPort} is reachable from any pod of the namespace`);
      }
      if (isSuite(w) && gateway && !ingressAllowed(policies, pod, { pod: gateway.labels }, containerPort)) {
        problems.push(`${at}: port ${containerPort} is not reachable from the gateway`);
      }
      if (isSuite(w) && !suiteReaches(policies, all, pod, containerPort)) {
        problems.push(`${at}: port ${containerPort} is not reachable from the other services`);
      }
    }
  }
  return problems;
}

function suiteReaches(
  policies: INetworkPolicy[],
  all: Workload[],
  pod: Parameters<typeof ingressAllowed>[1],
  port: number,
): boolean {
  return all
    .filter((w) => isSuite(w) && services.includes(w.name))
    .every((w) => ingressAllowed(policies, pod, { pod: w.labels }, port));
}

/**
 * The image's default commands (`CMD [...]` of each stage of the Containerfile, given as its text) run
 * their bundle with the flags of nodeFlagsFor, as the manifests do.
 */
export function containerfileCommandProblems(containerfile: string): string[] {
  const problems: string[] = [];
  let stage = "";
  for (const line of containerfile.split("\n")) {
    const from = /^FROM\s+\S+\s+AS\s+(\S+)/i.exec(line);
    if (from) stage = from[1] ?? "";
    const cmd = /^CMD\s+(\[.*\])\s*$/.exec(line);
    if (!cmd) continue;
    const command = JSON.parse(cmd[1] ?? "[]") as string[];
    const want = nodeCommand(command.at(-1) ?? "").join(" ");
    if (command.join(" ") !== want) problems.push(`Containerfile ${stage}: CMD is not ${want}`);
  }
  return problems;
}
