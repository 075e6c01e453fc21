import { readFileSync } from "node:fs";
import path from "node:path";
import type { IDeployment } from "kubernetes-models/apps/v1";
import type { IContainer, IPodSpec } from "kubernetes-models/v1";
import { describe, expect, it } from "vitest";
import * as check from "./invariants.js";
import { deployDir, type Resource } from "./manifests.js";
import { schemaProblems } from "./models.js";
import { dataServices, sealingServices, services, suite } from "./workloads.js";

// The checks run on the rendered manifests only when kubectl is present; these prove on a small
// hand-written suite that each one passes a good manifest and catches a broken one.

const labels = (name: string) => ({
  "app.kubernetes.io/name": name,
  "app.kubernetes.io/component": name === "gateway" ? "gateway" : "service",
  "app.kubernetes.io/part-of": "avatar-session-service",
});
const secret = (key: string) => ({ name: key, valueFrom: { secretKeyRef: { name: "avatar-secrets", key } } });
const resource = (apiVersion: string, kind: string, name: string, rest: object): Resource => ({
  apiVersion,
  kind,
  metadata: { name, labels: labels(name) },
  ...rest,
});

function deployment(name: string): Resource {
  const env = [secret("NATS_URL")];
  if (dataServices.includes(name)) env.push(secret("DATABASE_URL"));
  if (sealingServices.includes(name)) env.push(secret("ENCRYPTION_KEYS"));
  const container: IContainer = {
    name: "app",
    image: "avatar-session-service",
    command: check.nodeCommand(check.bundleOf(name)),
    envFrom: [{ configMapRef: { name: "avatar-config" } }],
    env,
    ports: [{ name: "http", containerPort: 8080 }],
    livenessProbe: { httpGet: { path: "/healthz", port: "http" } },
    readinessProbe: { httpGet: { path: "/readyz", port: "http" } },
    resources: {
      requests: { cpu: "100m", memory: "128Mi" },
      // Twice the process's old space (oldSpaceMemoryProblems), and never below the pods' default.
      limits: {
        cpu: "1",
        memory: `${Math.max(512, 2 * (check.initialOldSpaceMb(check.nodeCommand(check.bundleOf(name))) ?? 0))}Mi`,
      },
    },
    securityContext: {
      allowPrivilegeEscalation: false,
      readOnlyRootFilesystem: true,
      capabilities: { drop: ["ALL"] },
    },
    volumeMounts: [{ name: "tmp", mountPath: "/tmp" }],
  };
  const spec: IDeployment["spec"] = {
    selector: { matchLabels: { "app.kubernetes.io/name": name } },
    template: {
      metadata: { labels: labels(name) },
      spec: {
        securityContext: { runAsNonRoot: true },
        containers: [container],
        volumes: [{ name: "tmp", emptyDir: {} }],
      },
    },
  };
  return resource("apps/v1", "Deployment", name, { spec });
}

const policy = (name: string, spec: object) =>
  resource("networking.k8s.io/v1", "NetworkPolicy", name, { spec });
const suitePods = { matchLabels: { "app.kubernetes.io/part-of": "avatar-session-service" } };

function goodSuite(): Resource[] {
  const urls = Object.fromEntries(services.map((s) => [`${s.toUpperCase()}_URL`, `http://${s}:8080`]));
  return [
    resource("v1", "ConfigMap", "avatar-config", { data: { PORT: "8080", HOST: "0.0.0.0", ...urls } }),
    ...suite.flatMap((name) => [
      deployment(name),
      resource("v1", "Service", name, {
        spec: { selector: { "app.kubernetes.io/name": name }, ports: [{ port: 8080, targetPort: "http" }] },
      }),
      resource("policy/v1", "PodDisruptionBudget", name, {
        spec: { maxUnavailable: 1, selector: { matchLabels: { "app.kubernetes.io/name": name } } },
      }),
    ]),
    policy("default-deny-ingress", { podSelector: {}, policyTypes: ["Ingress"] }),
    policy("gateway-from-anywhere", {
      podSelector: { matchLabels: { "app.kubernetes.io/component": "gateway" } },
      ingress: [{ ports: [{ port: "http" }] }],
    }),
    policy("services-from-suite", {
      podSelector: { matchLabels: { "app.kubernetes.io/component": "service" } },
      ingress: [{ from: [{ podSelector: suitePods }], ports: [{ port: 8080 }] }],
    }),
  ];
}

/** A good suite changed by `change`, which gets the resource of that kind and name. */
function broken(kind: string, name: string, change: (r: Resource) => void): Resource[] {
  const resources = goodSuite();
  const target = resources.find((r) => r.kind === kind && r.metadata.name === name);
  if (!target) throw new Error(`no ${kind}/${name} in the fixture`);
  change(target);
  return resources;
}
const podOf = (r: Resource) => (r.spec as IDeployment["spec"])?.template.spec as IPodSpec;
const appOf = (r: Resource) => podOf(r).containers[0] as IContainer;

const allChecks = [
  check.missingComponentProblems,
  check.podSecurityProblems,
  check.oldSpaceMemoryProblems,
  check.suiteDeploymentProblems,
  check.suiteEnvironmentProblems,
  check.referenceProblems,
  check.serviceProblems,
  check.ingressProblems,
  check.disruptionBudgetProblems,
  check.networkProblems,
  (r: Resource[]) => check.replicaProblems(r, 1),
];
const problems = (resources: Resource[]) => allChecks.flatMap((c) => c(resources));

describe("mebibytes", () => {
  it("reads the memory quantities of a manifest, and nothing else", () => {
    expect(["1Gi", "512Mi", "1.5Gi", "2048Ki", "1G", "1000000", 536870912].map(check.mebibytes)).toEqual([
      1024,
      512,
      1536,
      2,
      1e9 / 2 ** 20,
      1e6 / 2 ** 20,
      512,
    ]);
    for (const bad of ["lots", "1Ti", "Mi", "", undefined]) expect(check.mebibytes(bad)).toBeUndefined();
  });
});

describe("initialOldSpaceMb", () => {
  it("reads a command's old space, none when it sets none, NaN when its value is no number", () => {
    expect(check.initialOldSpaceMb(["node", "--initial-old-space-size=512", "gateway/dist/main.js"])).toBe(
      512,
    );
    expect(check.initialOldSpaceMb(["node", "tools/avatarctl/dist/main.js"])).toBeUndefined();
    expect(check.initialOldSpaceMb(["node", "--initial-old-space-size=lots", "x.js"])).toBeNaN();
  });
});

describe("the manifest checks", () => {
  it("pass a good suite", async () => {
    expect(problems(goodSuite())).toEqual([]);
    expect(await schemaProblems(goodSuite(), "fixture")).toEqual([]);
  });

  it("catch a schema error and an unknown kind", async () => {
    const resources = broken("Deployment", "tokens", (r) => {
      (r.spec as { replicas: unknown }).replicas = "2";
    });
    resources.push({ apiVersion: "apps/v2", kind: "Deployment", metadata: { name: "typo" } });
    expect(await schemaProblems(resources, "fixture")).toEqual([
      "fixture: Deployment/tokens: data/spec/replicas must be integer",
      "fixture: Deployment/typo: kubernetes-models does not know apps/v2 Deployment",
    ]);
  });

  it.each([
    [
      "a process run without the flags every node runs with",
      broken("Deployment", "gateway", (r) => {
        appOf(r).command = ["node", "gateway/dist/main.js"];
      }),
      `Deployment/gateway: command is not ${check.nodeCommand("gateway/dist/main.js").join(" ")}`,
    ],
    [
      "the pipeline run without the flags it adds to every node's",
      broken("Deployment", "pipeline", (r) => {
        appOf(r).command = ["node", "--initial-old-space-size=128", "services/pipeline/dist/main.js"];
      }),
      `Deployment/pipeline: command is not ${check.nodeCommand("services/pipeline/dist/main.js").join(" ")}`,
    ],
    [
      "a relay limited to less memory than twice its old space",
      broken("Deployment", "pipeline", (r) => {
        appOf(r).resources = {
          requests: { cpu: "1", memory: "256Mi" },
          limits: { cpu: "1", memory: "768Mi" },
        };
      }),
      "Deployment/pipeline: memory limit 768Mi < twice --initial-old-space-size=512",
    ],
    [
      "a liveness probe on another path",
      broken("Deployment", "gateway", (r) => {
        appOf(r).livenessProbe = { httpGet: { path: "/health", port: "http" } };
      }),
      "Deployment/gateway: liveness probe is not GET /healthz",
    ],
    [
      "a readiness probe on another port",
      broken("Deployment", "memory", (r) => {
        appOf(r).readinessProbe = { httpGet: { path: "/readyz", port: 9090 } };
      }),
      "Deployment/memory: readiness probe port 9090 is not PORT 8080",
    ],
    [
      "a writable root filesystem",
      broken("Deployment", "tokens", (r) => {
        appOf(r).securityContext = { ...appOf(r).securityContext, readOnlyRootFilesystem: false };
      }),
      "Deployment/tokens: root filesystem is writable",
    ],
    [
      "a root user",
      broken("Deployment", "agents", (r) => {
        podOf(r).securityContext = {};
      }),
      "Deployment/agents container app: runAsNonRoot is not true",
    ],
    [
      "missing limits",
      broken("Deployment", "catalog", (r) => {
        appOf(r).resources = { requests: { cpu: "1", memory: "1Gi" } };
      }),
      "Deployment/catalog container app: no cpu and memory limits",
    ],
    [
      "a grace period shorter than the drain",
      broken("Deployment", "pipeline", (r) => {
        podOf(r).terminationGracePeriodSeconds = 5;
      }),
      "Deployment/pipeline: terminationGracePeriodSeconds 5 < preStop 0 s + 15 s",
    ],
    [
      "a database URL written into the manifest",
      broken("Deployment", "sessions", (r) => {
        appOf(r).env = [secret("NATS_URL"), { name: "DATABASE_URL", value: "postgres://u:p@db/x" }];
      }),
      "Deployment/sessions: DATABASE_URL is not a secretKeyRef",
    ],
    [
      "an undocumented Secret",
      broken("Deployment", "tokens", (r) => {
        appOf(r).env?.push({ name: "X", valueFrom: { secretKeyRef: { name: "other", key: "X" } } });
      }),
      "Deployment/tokens container app: Secret other is neither defined nor documented",
    ],
    [
      "a Service that selects nothing",
      broken("Service", "catalog", (r) => {
        (r.spec as { selector: object }).selector = { "app.kubernetes.io/name": "katalog" };
      }),
      "Service/catalog: selects no pods",
    ],
    [
      "a PodDisruptionBudget with minAvailable",
      broken("PodDisruptionBudget", "gateway", (r) => {
        r.spec = {
          minAvailable: 1,
          selector: { matchLabels: { "app.kubernetes.io/name": "gateway" } },
        };
      }),
      "PodDisruptionBudget/gateway: uses minAvailable",
    ],
    [
      "a default-deny egress policy",
      broken("NetworkPolicy", "default-deny-ingress", (r) => {
        r.spec = { podSelector: {}, policyTypes: ["Ingress", "Egress"] };
      }),
      "Deployment/gateway: egress policies block DNS",
    ],
    [
      "services open to everyone",
      broken("NetworkPolicy", "services-from-suite", (r) => {
        (r.spec as { ingress: object[] }).ingress = [{}];
      }),
      "Deployment/tokens: port 8080 is reachable from outside the namespace",
    ],
    [
      "services closed to the gateway",
      broken("NetworkPolicy", "services-from-suite", (r) => {
        (r.spec as { ingress: object[] }).ingress = [];
      }),
      "Deployment/tokens: port 8080 is not reachable from the gateway",
    ],
  ])("catch %s", (_, resources, expected) => {
    expect(problems(resources)).toContain(expected);
  });

  it("accept an egress policy that allows DNS", () => {
    const resources = broken("NetworkPolicy", "default-deny-ingress", (r) => {
      r.spec = {
        podSelector: {},
        policyTypes: ["Ingress", "Egress"],
        egress: [{ ports: [{ protocol: "UDP", port: 53 }] }],
      };
    });
    expect(check.networkProblems(resources)).toEqual([]);
  });

  it("want a transportA media server reachable from outside on each of its ports, UDP included", () => {
    const mediaLabels = {
      "app.kubernetes.io/name": "transport-a",
      "app.kubernetes.io/component": "media-server",
    };
    const server: Resource = {
      apiVersion: "apps/v1",
      kind: "Deployment",
      metadata: { name: "transport-a", labels: mediaLabels },
      spec: {
        selector: { matchLabels: { "app.kubernetes.io/name": "transport-a" } },
        template: {
          metadata: { labels: mediaLabels },
          spec: {
            containers: [
              {
                name: "transport-a",
                image: "livekit/livekit-server",
                ports: [
                  { name: "http", containerPort: 7880, protocol: "TCP" },
                  { name: "rtc-udp", containerPort: 7882, protocol: "UDP" },
                ],
              },
            ],
          },
        },
      },
    };
    const open = (ports: object[]) =>
      policy("transport-a-from-anywhere", {
        podSelector: { matchLabels: { "app.kubernetes.io/name": "transport-a" } },
        ingress: [{ ports }],
      });
    const both = [
      { protocol: "TCP", port: "http" },
      { protocol: "UDP", port: "rtc-udp" },
    ];
    expect(check.networkProblems([...goodSuite(), server, open(both)])).toEqual([]);
    expect(
      check.networkProblems([...goodSuite(), server, open([{ protocol: "TCP", port: "http" }])]),
    ).toEqual(["Deployment/transport-a: port 7882/UDP is not reachable from outside"]);
    // Behind the default deny alone it is closed to its clients.
    expect(check.networkProblems([...goodSuite(), server])).toEqual([
      "Deployment/transport-a: port 7880/TCP is not reachable from outside",
      "Deployment/transport-a: port 7882/UDP is not reachable from outside",
    ]);
  });

  it("want the image's commands run with each process's node flags", () => {
    const containerfile = readFileSync(path.join(deployDir, "Containerfile"), "utf8");
    expect(check.containerfileCommandProblems(containerfile)).toEqual([]);
    const withoutOwnFlags = containerfile.replace(', "--max-semi-space-size=32"', "");
    expect(withoutOwnFlags).not.toEqual(containerfile);
    expect(check.containerfileCommandProblems(withoutOwnFlags)).toEqual([
      `Containerfile pipeline: CMD is not ${check.nodeCommand("services/pipeline/dist/main.js").join(" ")}`,
    ]);
  });

  it("catch a command that is not a bundle pnpm build makes, or whose source is gone", () => {
    expect(check.entryFileProblems(goodSuite())).toEqual([]);
    const fromSource = broken("Deployment", "tokens", (r) => {
      appOf(r).command = ["node", "services/tokens/src/main.ts"];
    });
    expect(check.entryFileProblems(fromSource)).toEqual([
      "services/tokens/src/main.ts is not a bundle that pnpm build makes (tools/build)",
    ]);
    const misspelled = broken("Deployment", "catalog", (r) => {
      appOf(r).command = ["node", "services/catalogue/dist/main.js"];
    });
    expect(check.entryFileProblems(misspelled)).toEqual([
      "services/catalogue/dist/main.js is not a bundle that pnpm build makes (tools/build)",
    ]);
  });

  it("catch an Ingress to another Service than the gateway", () => {
    const backend = (name: string) => ({ service: { name, port: { name: "http" } } });
    const ingress = resource("networking.k8s.io/v1", "Ingress", "public", {
      spec: { rules: [{ http: { paths: [{ path: "/", pathType: "Prefix", backend: backend("tokens") }] } }] },
    });
    expect(check.ingressProblems([...goodSuite(), ingress])).toEqual([
      "Ingress/public: backend tokens is not the gateway",
    ]);
  });

  it("catch too few replicas and a replica count an autoscaler should own", () => {
    const hpa = resource("autoscaling/v2", "HorizontalPodAutoscaler", "gateway", {
      spec: {
        scaleTargetRef: { apiVersion: "apps/v1", kind: "Deployment", name: "gateway" },
        minReplicas: 2,
        maxReplicas: 4,
      },
    });
    const resources = broken("Deployment", "gateway", (r) => {
      (r.spec as { replicas: number }).replicas = 2;
    });
    expect(check.replicaProblems([...resources, hpa], 2)).toEqual([
      "Deployment/gateway: sets replicas although an autoscaler owns them",
      ...suite.filter((n) => n !== "gateway").map((n) => `Deployment/${n}: 1 replicas < 2`),
    ]);
  });
});
