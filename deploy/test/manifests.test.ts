import type { IStatefulSet } from "kubernetes-models/apps/v1";
import type { IHorizontalPodAutoscaler } from "kubernetes-models/autoscaling/v2";
import type { IIngress } from "kubernetes-models/networking.k8s.io/v1";
import type { ISecret, IService } from "kubernetes-models/v1";
import { beforeAll, describe, expect, it } from "vitest";
import { parse } from "yaml";
import * as check from "./invariants.js";
import { asResource, kubectlVersion, type Resource, readSources, render } from "./manifests.js";
import { modelFor, schemaProblems } from "./models.js";
import { configMapData, envValue, ofKind, secretName, workloads } from "./workloads.js";

const kubectl = kubectlVersion();

describe("the YAML files under deploy/base and deploy/overlays, parsed directly", () => {
  const sources = readSources();

  it("are the base and the dev and prod overlays", () => {
    const kustomizations = sources.filter((s) => s.role === "kustomization").map((s) => s.file);
    expect(kustomizations).toEqual([
      "base/kustomization.yaml",
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

  it("start processes whose entry files exist in the repository", () => {
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
  ["all seven components have a Deployment", check.missingComponentProblems],
  ["every workload runs non-root, locked down, limited and probed", check.podSecurityProblems],
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

describe.skipIf(!kubectl)(`kubectl kustomize (${kubectl ?? "kubectl not on PATH"})`, () => {
  describe.each(["base", "overlays/dev", "overlays/prod"])("%s", (folder) => {
    let resources: Resource[] = [];
    beforeAll(() => {
      resources = render(folder);
    });

    it("validates against kubernetes-models (every kind known)", async () => {
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

    it("runs Postgres 15 and NATS with JetStream as single-replica StatefulSets", () => {
      const sets = ofKind<IStatefulSet>(resources, "StatefulSet");
      const container = (name: string) =>
        sets.find((s) => s.metadata?.name === name)?.spec?.template.spec?.containers[0];
      expect(sets.map((s) => s.spec?.replicas)).toEqual([1, 1]);
      expect(container("postgres")?.image).toMatch(/^postgres:15\b/);
      expect(container("nats")?.image).toMatch(/^nats:2\.(9|1\d)\b/);
      expect(container("nats")?.args).toContain("--jetstream");
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
