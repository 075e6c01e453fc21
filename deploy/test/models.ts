import type { Resource } from "./manifests.js";

type Model = new (data: unknown) => { validate(): void };

/** The models package of an API group outside Kubernetes itself; the rest are kubernetes-models'. */
const packageOfGroup: Record<string, string> = {
  "gateway.networking.k8s.io": "@kubernetes-models/gateway-api",
  "cert-manager.io": "@kubernetes-models/cert-manager",
};

/** The module with the models of an apiVersion: `<package>/<apiVersion>`. */
export function modelModuleOf(apiVersion: string): string {
  const group = apiVersion.includes("/") ? (apiVersion.split("/")[0] ?? "") : "";
  return `${packageOfGroup[group] ?? "kubernetes-models"}/${apiVersion}`;
}

/**
 * The model class for an apiVersion and kind (kubernetes-models, the Gateway API and cert-manager
 * models), or undefined when no package knows them.
 */
export async function modelFor(apiVersion: string, kind: string): Promise<Model | undefined> {
  let module: Record<string, unknown>;
  try {
    const specifier = modelModuleOf(apiVersion);
    module = await import(/* @vite-ignore */ specifier);
  } catch {
    return undefined;
  }
  const model = module[kind];
  return typeof model === "function" && typeof model.prototype?.validate === "function"
    ? (model as Model)
    : undefined;
}

/** One line per resource that fails its schema or whose kind is unknown (types only: unknown fields pass). */
export async function schemaProblems(resources: Resource[], where: string): Promise<string[]> {
  const problems: string[] = [];
  for (const r of resources) {
    const name = `${where}: ${r.kind}/${r.metadata.name}`;
    const Model = await modelFor(r.apiVersion, r.kind);
    if (!Model) {
      problems.push(`${name}: kubernetes-models does not know ${r.apiVersion} ${r.kind}`);
      continue;
    }
    try {
      new Model(unwrapSecretData(r)).validate();
    } catch (err) {
      problems.push(`${name}: ${(err as Error).message}`);
    }
  }
  return problems;
}

/**
 * kustomize wraps long base64 Secret values over several lines; the API server's decoder skips line
 * breaks, the schema's "byte" format does not.
 */
function unwrapSecretData(r: Resource): Resource {
  if (r.kind !== "Secret" || typeof r.data !== "object" || r.data === null) return r;
  const data = Object.entries(r.data).map(([k, v]) => [
    k,
    typeof v === "string" ? v.replace(/[\r\n]/g, "") : v,
  ]);
  return { ...r, data: Object.fromEntries(data) };
}
