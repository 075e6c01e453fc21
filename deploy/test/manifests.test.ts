import { NATS_SERVER_GO_ENV } from "@avatar/testkit";
import type { IDeployment, IStatefulSet } from "kubernetes-models/apps/v1";
import type { IHorizontalPodAutoscaler } from "kubernetes-models/autoscaling/v2";
import type { IJob } from "kubernetes-models/batch/v1";
import type { IIngress, INetworkPolicy } from "kubernetes-models/networking.k8s.io/v1";
import type { ISecret, IService } from "kubernetes-models/v1";
import { beforeAll, describe, expect, it } from "vitest";
import { parse } from "yaml";
import * as deployment from "./deployment-checks.js";
import * as check from "./invariants.js";
import { asResource, kubectlVersion, type Resource, readObjects, readSources, render } from "./manifests.js";
import { modelFor, schemaProblems } from "./models.js";
import type { Destination } from "./network-policy.js";
import { strictTypeProblems } from "./strict-types.js";
import { configMapData, envValue, identitySecretName, ofKind, secretName, workloads } from "./workloads.js";

const kubectl = kubectlVersion();
// CI renders the overlays for real: there a missing kubectl is a failure, not a reason to skip.
if (!kubectl && process.env.CI === "true") throw new Error("kubectl is required in CI (kubectl kustomize)");
if (!kubectl) console.warn("kubectl not found: skipping the checks of the rendered overlays");

describe("the YAML files under deploy/base and deploy/overlays, parsed directly", () => {
  const sources = readSources();

  it("are the base and the dev and prod overlays", () => {
    const kustomizations = sources.filter((s) => s.role === "kustomization").map((s) => s.file);
    expect(kustomizations).toEqual([
      "base/kustomization.yaml",
      "components/cert-manager/kustomization.yaml",
      "components/gateway-api/kustomization.yaml",
      "overlays/dev/kustomization.yaml",
      "overlays/prod/kustomization.yaml",
    ]);
  });

  it("are each listed by their folder's kustomization.yaml", () => {
    expect(sources.filter((s) => s.role === "unused").map((s) => s.file)).toEqual([]);
  });

  it("hold resources that validate against kubernetes-models", async () => {
    const resources = sources.filter((s) => s.role === "resource");
    expect(resources.length).toBeGreaterThan(10);
    const problems: string[] = [];
    for (const s of resources) {
      problems.push(
        ...(await schemaProblems(
          s.documents.map((d) => asResource(d, s.file)),
          s.file,
        )),
      );
    }
    expect(problems).toEqual([]);
  });

  it("hold resources with no unknown field and no wrong type (strict type check)", () => {
    const sets = sources
      .filter((s) => s.role === "resource")
      .map((s) => ({ where: s.file, resources: s.documents.map((d) => asResource(d, s.file)) }));
    expect(strictTypeProblems(sets)).toEqual([]);
  });

  it("start the bundles pnpm build makes of entry files in the repository", () => {
    const base = sources.filter((s) => s.file.startsWith("base/") && s.role === "resource");
    const resources = base.flatMap((s) => s.documents.map((d) => asResource(d, s.file)));
    expect(check.missingComponentProblems(resources)).toEqual([]);
    expect(check.entryFileProblems(resources)).toEqual([]);
  });

  it("hold patches of kinds kubernetes-models knows", async () => {
    const patches = sources
      .filter((s) => s.role === "patch")
      .flatMap((s) => s.documents.map((d) => asResource(d, s.file)));
    expect(patches.length).toBeGreaterThan(0);
    for (const p of patches)
      expect(await modelFor(p.apiVersion, p.kind), `${p.kind}/${p.metadata.name}`).toBeDefined();
  });
});

/** Checks that hold for the base and for every overlay. */
const everywhere: [string, (resources: Resource[]) => string[]][] = [
  ["every process has its own service identity, services the callers' keys", deployment.identityProblems],
  ["rollouts keep capacity, replicas spread, the pipeline has time to drain", deployment.rolloutProblems],
  ["all seven components have a Deployment", check.missingComponentProblems],
  ["every workload runs non-root, locked down, limited and probed", check.podSecurityProblems],
  ["a node's memory limit is at least twice its initial old space", check.oldSpaceMemoryProblems],
  [
    "the suite probes /healthz and /readyz, has a read-only root and time to drain",
    check.suiteDeploymentProblems,
  ],
  [
    "the suite gets its secrets from secretKeyRefs and its service URLs point at Services",
    check.suiteEnvironmentProblems,
  ],
  ["every ConfigMap and Secret reference resolves", check.referenceProblems],
  ["every Service selects existing pods on a declared port", check.serviceProblems],
  ["Ingresses lead only to the gateway", check.ingressProblems],
  ["disruption budgets use maxUnavailable and select pods", check.disruptionBudgetProblems],
  ["network policies expose only the gateway (and transportA) and never block DNS", check.networkProblems],
];

const folders = ["base", "overlays/dev", "overlays/prod"] as const;

describe.skipIf(!kubectl)(`kubectl kustomize (${kubectl ?? "kubectl not on PATH"})`, () => {
  it("renders objects with no unknown field and no wrong type (strict type check)", () => {
    expect(strictTypeProblems(folders.map((where) => ({ where, resources: render(where) })))).toEqual([]);
  });

  it("catches a misspelled field that the models' own validation lets through", async () => {
    const resources = render("base");
    const probe = (ofKind<IDeployment>(resources, "Deployment")[0]?.spec?.template.spec?.containers[0]
      ?.livenessProbe ?? {}) as Record<string, unknown>;
    probe.perodSeconds = 10;
    expect(await schemaProblems(resources, "base")).toEqual([]);
    expect(strictTypeProblems([{ where: "base", resources }])).toEqual([
      `base: Deployment/agents: Object literal may only specify known properties, and '"perodSeconds"' does not exist in type 'IProbe'.`,
    ]);
  });

  describe.each(folders)("%s", (folder) => {
    let resources: Resource[] = [];
    beforeAll(() => {
      resources = render(folder);
    });

    it("validates against the models (every kind known)", async () => {
      expect(resources.length).toBeGreaterThan(20);
      expect(await schemaProblems(resources, folder)).toEqual([]);
    });

    it.each(everywhere)("%s", (_, problems) => {
      expect(problems(resources)).toEqual([]);
    });
  });

  describe("overlays/prod", () => {
    let resources: Resource[] = [];
    beforeAll(() => {
      resources = render("overlays/prod");
    });

    it("scales down slowly enough for the pipeline to hand over its sessions", () => {
      expect(deployment.autoscalerProblems(resources)).toEqual([]);
    });

    it("denies egress but DNS, the services, the external Postgres and NATS, and the providers", () => {
      const policies = ofKind<INetworkPolicy>(resources, "NetworkPolicy");
      const storeIp = (name: string): Destination => {
        const cidr = policies.find((p) => p.metadata?.name === name)?.spec?.egress?.[0]?.to?.[0]?.ipBlock
          ?.cidr;
        return { ip: cidr?.split("/")[0] ?? "missing" };
      };
      const stores = { postgres: storeIp("services-to-postgres"), nats: storeIp("suite-to-nats") };
      expect(deployment.egressProblems(resources, stores)).toEqual([]);
    });

    it("fits every pool at the autoscalers' maximum into Postgres's max_connections", () => {
      const budget = readObjects("overlays/prod/connection-budget.yaml")[0]?.data as Record<string, string>;
      const max = Number(budget["max-connections"]);
      expect(deployment.connectionBudgetProblems(resources, max, Number(budget.reserved))).toEqual([]);
      // The check can fail: a smaller server does not take the pools at their replicas. The pipeline keeps
      // no data and has no pool, however far it scales.
      expect(deployment.connectionBudgetProblems(resources, 50, Number(budget.reserved))).toEqual([
        "agents 2x3 + catalog 2x3 + memory 2x3 + sessions 2x6 + tokens 2x6 + webhooks 2x3 + 10 reserved = 58 connections > max_connections 50",
      ]);
    });

    it("publishes one host through the Ingress, the HTTPRoute and a cert-manager Certificate", () => {
      expect(resources.filter((r) => r.kind === "HTTPRoute")).toHaveLength(1);
      expect(resources.filter((r) => r.kind === "Certificate")).toHaveLength(1);
      expect(deployment.publicEndpointProblems(resources)).toEqual([]);
    });

    it("runs every component with 2+ replicas, the gateway and the pipeline autoscaled", () => {
      expect(check.replicaProblems(resources, 2)).toEqual([]);
      const targets = ofKind<IHorizontalPodAutoscaler>(resources, "HorizontalPodAutoscaler").map(
        (h) => h.spec?.scaleTargetRef.name,
      );
      expect(targets.sort()).toEqual(["gateway", "pipeline"]);
    });

    it("publishes the gateway through one ingress-nginx Ingress with WebSocket-friendly timeouts", () => {
      const [ingress, ...others] = ofKind<IIngress>(resources, "Ingress");
      expect(others).toEqual([]);
      const annotations = ingress?.metadata?.annotations ?? {};
      expect(Number(annotations["nginx.ingress.kubernetes.io/proxy-read-timeout"])).toBeGreaterThanOrEqual(
        3600,
      );
      expect(Number(annotations["nginx.ingress.kubernetes.io/proxy-send-timeout"])).toBeGreaterThanOrEqual(
        3600,
      );
      const gateway = workloads(resources).find((w) => w.name === "gateway")?.containers[0];
      const publicUrl = gateway && envValue(gateway, "PUBLIC_BASE_URL", resources);
      expect(publicUrl && new URL(publicUrl).hostname).toBe(ingress?.spec?.rules?.[0]?.host);
    });

    it("ships no Secret and no in-cluster data store", () => {
      expect(resources.filter((r) => r.kind === "Secret" || r.kind === "StatefulSet")).toEqual([]);
    });

    it("puts everything namespaced in the avatar namespace", () => {
      const stray = resources.filter((r) => r.kind !== "Namespace" && r.metadata.namespace !== "avatar");
      expect(stray.map((r) => `${r.kind}/${r.metadata.name}`)).toEqual([]);
    });
  });

  describe("overlays/dev", () => {
    let resources: Resource[] = [];
    beforeAll(() => {
      resources = render("overlays/dev");
    });

    it("denies egress but DNS, the services, its own Postgres and NATS, and the providers", () => {
      const pod = (name: string): Destination => ({ pod: { "app.kubernetes.io/name": name } });
      expect(deployment.egressProblems(resources, { postgres: pod("postgres"), nats: pod("nats") })).toEqual(
        [],
      );
    });

    it("fits every pool into its Postgres's max_connections", () => {
      const sets = ofKind<IStatefulSet>(resources, "StatefulSet");
      const args =
        sets.find((s) => s.metadata?.name === "postgres")?.spec?.template.spec?.containers[0]?.args ?? [];
      const max = Number(args.find((a) => a.startsWith("max_connections="))?.split("=")[1]);
      expect(deployment.connectionBudgetProblems(resources, max, 10)).toEqual([]);
    });

    it("generates throwaway service identities for every process", () => {
      const secret = ofKind<ISecret>(resources, "Secret").find((s) =>
        s.metadata?.name?.startsWith(`${identitySecretName}-`),
      );
      expect(Object.keys(secret?.data ?? {}).sort()).toEqual([
        "agents",
        "avatarctl",
        "catalog",
        "gateway",
        "memory",
        "pipeline",
        "public-keys",
        "sessions",
        "tokens",
        "webhooks",
      ]);
    });

    it("runs Postgres 15 and NATS with JetStream as single-replica StatefulSets", () => {
      const sets = ofKind<IStatefulSet>(resources, "StatefulSet");
      const container = (name: string) =>
        sets.find((s) => s.metadata?.name === name)?.spec?.template.spec?.containers[0];
      expect(sets.map((s) => s.spec?.replicas)).toEqual([1, 1]);
      expect(container("postgres")?.image).toMatch(/^postgres:15\b/);
      expect(container("nats")?.image).toMatch(/^nats:2\.(9|1\d)\b/);
      expect(container("nats")?.args).toContain("--jetstream");
      // The Go settings that tests and benchmarks run nats-server with, and a soft memory limit under
      // the container's.
      const nats = container("nats");
      for (const [name, value] of Object.entries(NATS_SERVER_GO_ENV)) {
        expect(nats && envValue(nats, name, resources)).toBe(value);
      }
      expect(nats && envValue(nats, "GOMEMLIMIT", resources)).toBe("384MiB");
    });

    it("generates avatar-secrets with URLs of the in-cluster Postgres and NATS and a 32-byte key", () => {
      const secret = ofKind<ISecret>(resources, "Secret").find((s) =>
        s.metadata?.name?.startsWith(`${secretName}-`),
      );
      const value = (key: string) => Buffer.from(secret?.data?.[key] ?? "", "base64").toString();
      const services = ofKind<IService>(resources, "Service");
      for (const key of ["DATABASE_URL", "NATS_URL"]) {
        const url = new URL(value(key));
        const service = services.find((s) => s.metadata?.name === url.hostname);
        expect(
          service?.spec?.ports?.map((p) => p.port),
          key,
        ).toContain(Number(url.port));
      }
      const [id, key] = value("ENCRYPTION_KEYS").split(":");
      expect(id).toBeTruthy();
      expect(Buffer.from(key ?? "", "base64")).toHaveLength(32);
    });

    it("runs a transportA server keyed from avatar-secrets, which sessions and the pipeline reach with the same keys", () => {
      const all = workloads(resources);
      const server = all.find((w) => w.name === "transport-a")?.containers[0];
      if (!server) throw new Error("no transport-a Deployment");
      expect(server.image).toMatch(/^livekit\/livekit-server:v\d+\.\d+\.\d+$/);
      // The server's key list is built from the Secret's pair; the config file holds no key.
      expect(envValue(server, "LIVEKIT_KEYS", resources)).toBe(
        "$(TRANSPORT_A_API_KEY): $(TRANSPORT_A_API_SECRET)",
      );
      const keyRefs = (c: NonNullable<typeof server>) =>
        ["TRANSPORT_A_API_KEY", "TRANSPORT_A_API_SECRET"].map((k) => envValue(c, k, resources));
      const serverKeys = keyRefs(server);
      expect(serverKeys.every((v) => v?.startsWith(`secret:${secretName}-`))).toBe(true);
      const config = parse(configMapData(resources, "transport-a-config")?.["livekit.yaml"] ?? "") as {
        port: number;
        rtc: { tcp_port: number; udp_port: number };
        keys?: unknown;
        room: { auto_create: boolean };
      };
      expect(config.keys).toBeUndefined();
      expect(config.room.auto_create).toBe(false);
      const declared = (server.ports ?? []).map((p) => `${p.containerPort}/${p.protocol}`);
      expect(declared.sort()).toEqual([
        `${config.port}/TCP`,
        `${config.rtc.tcp_port}/TCP`,
        `${config.rtc.udp_port}/UDP`,
      ]);
      const service = ofKind<IService>(resources, "Service").find((s) => s.metadata?.name === "transport-a");
      expect(service?.spec?.ports?.map((p) => `${p.port}/${p.protocol}`).sort()).toEqual(declared.sort());

      for (const name of ["sessions", "pipeline"]) {
        const app = all.find((w) => w.name === name)?.containers[0];
        if (!app) throw new Error(`no ${name} Deployment`);
        expect(keyRefs(app), name).toEqual(serverKeys);
        const url = new URL(envValue(app, "TRANSPORT_A_URL", resources) ?? "");
        expect(url.hostname).toBe("transport-a");
        expect(Number(url.port)).toBe(config.port);
        expect(envValue(app, "TRANSPORT_A_PUBLIC_URL", resources)).toMatch(/^wss?:\/\//);
      }
      // Nobody else gets the secret.
      for (const w of all.filter((x) => !["sessions", "pipeline", "transport-a"].includes(x.name))) {
        expect(
          w.containers.some((c) => envValue(c, "TRANSPORT_A_API_SECRET", resources)),
          w.name,
        ).toBe(false);
      }
      const secret = ofKind<ISecret>(resources, "Secret").find((x) =>
        x.metadata?.name?.startsWith(`${secretName}-`),
      );
      const transportSecret = Buffer.from(secret?.data?.TRANSPORT_A_API_SECRET ?? "", "base64").toString();
      expect(transportSecret.length).toBeGreaterThanOrEqual(32);
    });

    it("has no Ingress (reach the gateway with kubectl port-forward)", () => {
      expect(resources.filter((r) => r.kind === "Ingress")).toEqual([]);
    });

    it("puts everything namespaced in the avatar-dev namespace", () => {
      const stray = resources.filter((r) => r.kind !== "Namespace" && r.metadata.namespace !== "avatar-dev");
      expect(stray.map((r) => `${r.kind}/${r.metadata.name}`)).toEqual([]);
    });
  });
});

describe("the avatarctl Job (deploy/operator)", () => {
  const [job] = readObjects("operator/avatarctl-job.yaml");

  it("has no unknown field, runs as the restricted standard asks, and uses the prod image", () => {
    if (!job) throw new Error("no Job");
    expect(strictTypeProblems([{ where: "operator", resources: [job] }])).toEqual([]);
    const prod = readSources().find((s) => s.file === "overlays/prod/kustomization.yaml")?.documents[0] as {
      images: { newName: string; newTag: string }[];
    };
    const container = (job as unknown as IJob).spec?.template.spec?.containers[0];
    expect(container?.image).toBe(`${prod.images[0]?.newName}:${prod.images[0]?.newTag}`);
    expect(check.podSecurityProblems([job])).toEqual([]);
  });

  it("signs as the operator and reaches the services the policies let operator pods reach", () => {
    const container = (job as unknown as IJob).spec?.template.spec?.containers[0];
    const key = container?.env?.find((e) => e.name === "SERVICE_IDENTITY_KEY")?.valueFrom?.secretKeyRef;
    expect(key).toEqual({ name: identitySecretName, key: "avatarctl" });
    expect(container?.envFrom?.[0]?.configMapRef?.name).toBe("avatar-config");
    const labels = (job as unknown as IJob).spec?.template.metadata?.labels;
    expect(labels?.["app.kubernetes.io/component"]).toBe("operator");
  });
});

describe.skipIf(!kubectl)("the deployment checks, on a broken copy of overlays/prod", () => {
  const broken = (change: (resources: Resource[]) => void) => {
    const resources = render("overlays/prod");
    change(resources);
    return resources;
  };
  const deploymentOf = (resources: Resource[], name: string) =>
    ofKind<IDeployment>(resources, "Deployment").find((d) => d.metadata?.name === name) as IDeployment;
  const appOf = (resources: Resource[], name: string) =>
    deploymentOf(resources, name).spec?.template.spec?.containers[0] as NonNullable<
      NonNullable<IDeployment["spec"]>["template"]["spec"]
    >["containers"][number];
  const stores: { postgres: Destination; nats: Destination } = {
    postgres: { ip: "10.20.0.10" },
    nats: { ip: "10.20.0.20" },
  };

  it("catch a process signing with another's identity key", () => {
    const resources = broken((r) => {
      const key = appOf(r, "gateway").env?.find((e) => e.name === "SERVICE_IDENTITY_KEY");
      if (key?.valueFrom?.secretKeyRef) key.valueFrom.secretKeyRef.key = "avatarctl";
    });
    expect(deployment.identityProblems(resources)).toEqual([
      "Deployment/gateway: SERVICE_IDENTITY_KEY is not key gateway of avatar-service-identity",
      "Deployment/gateway: reads the operator's identity key",
    ]);
  });

  it("catch a rollout that drops capacity and a pipeline without time to drain", () => {
    const resources = broken((r) => {
      const gateway = deploymentOf(r, "gateway").spec;
      if (gateway) gateway.strategy = { type: "RollingUpdate", rollingUpdate: { maxUnavailable: 1 } };
      const pipeline = deploymentOf(r, "pipeline").spec?.template.spec;
      if (pipeline) pipeline.terminationGracePeriodSeconds = 30;
    });
    expect(deployment.rolloutProblems(resources)).toEqual([
      "Deployment/gateway: rollouts may take a pod away before its replacement is ready (maxUnavailable)",
      "Deployment/pipeline: terminationGracePeriodSeconds 30 < preStop + drain + 15 s (80)",
    ]);
  });

  it("catch an autoscaler that removes pipeline pods faster than they drain", () => {
    const resources = broken((r) => {
      const hpa = ofKind<IHorizontalPodAutoscaler>(r, "HorizontalPodAutoscaler").find(
        (h) => h.metadata?.name === "pipeline",
      );
      if (hpa?.spec?.behavior?.scaleDown)
        hpa.spec.behavior.scaleDown.policies = [{ type: "Percent", value: 50, periodSeconds: 60 }];
    });
    expect(deployment.autoscalerProblems(resources)).toEqual([
      "HorizontalPodAutoscaler/pipeline: may remove more than one pod per 90 s (its target's grace period)",
    ]);
  });

  it("catch open egress", () => {
    const resources = broken((r) => {
      r.push({
        apiVersion: "networking.k8s.io/v1",
        kind: "NetworkPolicy",
        metadata: { name: "allow-all-egress" },
        spec: { podSelector: {}, policyTypes: ["Egress"], egress: [{}] },
      } as Resource);
    });
    const problems = deployment.egressProblems(resources, stores);
    expect(problems).toContain("Deployment/gateway: can reach the providers (public HTTPS)");
    expect(problems).toContain("Deployment/gateway: can reach Postgres");
    expect(problems).toContain("Deployment/pipeline: can reach 169.254.169.254");
  });

  it("catch hosts that disagree and TLS from a hand-made Secret", () => {
    const resources = broken((r) => {
      const ingress = ofKind<IIngress>(r, "Ingress")[0];
      const rule = ingress?.spec?.rules?.[0];
      if (rule) rule.host = "other.example.com";
      const tls = ingress?.spec?.tls?.[0];
      if (tls) tls.secretName = "my-tls";
    });
    expect(deployment.publicEndpointProblems(resources)).toEqual([
      "public hosts disagree: Ingress rule other.example.com, Ingress TLS api.example.com, HTTPRoute api.example.com, Certificate api.example.com, PUBLIC_BASE_URL api.example.com",
      "Ingress TLS Secret my-tls is not made by a Certificate",
    ]);
  });
});
