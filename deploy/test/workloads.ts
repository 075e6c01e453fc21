import type { IContainer, IPodTemplateSpec } from "kubernetes-models/v1";
import type { Resource } from "./manifests.js";

/** The eight processes of the suite; all but the gateway are Connect services with their own schema. */
export const suite = ["gateway", "tokens", "sessions", "catalog", "agents", "memory", "pipeline", "webhooks"];
export const services = suite.filter((name) => name !== "gateway");
/** The services that keep data (their modules have migrations): the pipeline keeps none, and reaches no Postgres. */
export const dataServices = services.filter((name) => name !== "pipeline");
/** The services that seal stored secrets and so need ENCRYPTION_KEYS. */
export const sealingServices = ["tokens", "agents", "webhooks"];

/** The Secret the suite reads but does not ship (see base/kustomization.yaml), and its keys. */
export const secretName = "avatar-secrets";
export const secretKeys = [
  "DATABASE_URL",
  "NATS_URL",
  "ENCRYPTION_KEYS",
  "ENCRYPTION_KEY_ID",
  "TRANSPORT_A_API_KEY",
  "TRANSPORT_A_API_SECRET",
];
/** The other one: a private key per process and the operator (`avatarctl identity generate`). */
export const identitySecretName = "avatar-service-identity";
export const identitySecretKeys = [...suite, "avatarctl", "public-keys"];
/** Every Secret the manifests read without shipping it, with its documented keys. */
export const externalSecrets: Record<string, string[]> = {
  [secretName]: secretKeys,
  [identitySecretName]: identitySecretKeys,
};

export const partOf = { key: "app.kubernetes.io/part-of", value: "avatar-session-service" };

export function ofKind<T>(resources: Resource[], kind: string): T[] {
  return resources.filter((r) => r.kind === kind) as unknown as T[];
}

/** A Deployment, StatefulSet or Job, reduced to what the checks need. */
export interface Workload {
  kind: string;
  name: string;
  /** spec.replicas as written (undefined: the API defaults it to 1, or an autoscaler owns it). */
  replicas: number | undefined;
  template: IPodTemplateSpec;
  labels: Record<string, string>;
  containers: IContainer[];
}

export function workloads(resources: Resource[]): Workload[] {
  return resources
    .filter((r) => r.kind === "Deployment" || r.kind === "StatefulSet" || r.kind === "Job")
    .map((r) => {
      const spec = (r.spec ?? {}) as { replicas?: number; template?: IPodTemplateSpec };
      const template = spec.template ?? {};
      return {
        kind: r.kind,
        name: r.metadata.name,
        replicas: spec.replicas,
        template,
        labels: template.metadata?.labels ?? {},
        containers: [...(template.spec?.initContainers ?? []), ...(template.spec?.containers ?? [])],
      };
    });
}

export function isSuite(w: Workload): boolean {
  return w.kind === "Deployment" && w.labels[partOf.key] === partOf.value;
}

/** A transportA server (overlays/dev): a public entry point for media, like the gateway is for the API. */
export function isMediaServer(w: Workload): boolean {
  return w.labels["app.kubernetes.io/component"] === "media-server";
}

/** Whether a map of labels contains every label of a plain selector (a Service's or a matchLabels). */
export function hasLabels(labels: Record<string, string>, wanted: Record<string, string>): boolean {
  return Object.entries(wanted).every(([k, v]) => labels[k] === v);
}

/**
 * The value a container sees for an environment variable, as far as the manifests tell: a literal, a
 * ConfigMap entry, or `secret:<name>/<key>` for a Secret reference. `env` wins over `envFrom`.
 */
export function envValue(container: IContainer, name: string, resources: Resource[]): string | undefined {
  const entry = container.env?.find((e) => e.name === name);
  if (entry) {
    if (entry.value !== undefined) return entry.value;
    const secret = entry.valueFrom?.secretKeyRef;
    if (secret) return `secret:${secret.name}/${secret.key}`;
    const ref = entry.valueFrom?.configMapKeyRef;
    if (ref) return configMapData(resources, ref.name)?.[ref.key];
    return undefined;
  }
  for (const from of [...(container.envFrom ?? [])].reverse()) {
    if (from.configMapRef) {
      const value = configMapData(resources, from.configMapRef.name)?.[name];
      if (value !== undefined) return value;
    }
    const secret =
      from.secretRef &&
      resources.find((r) => r.kind === "Secret" && r.metadata.name === from.secretRef?.name);
    if (secret && name in { ...(secret.data as object), ...(secret.stringData as object) }) {
      return `secret:${secret.metadata.name}/${name}`;
    }
  }
  return undefined;
}

export function configMapData(
  resources: Resource[],
  name: string | undefined,
): Record<string, string> | undefined {
  const found = resources.find((r) => r.kind === "ConfigMap" && r.metadata.name === name);
  return found ? ((found.data ?? {}) as Record<string, string>) : undefined;
}
