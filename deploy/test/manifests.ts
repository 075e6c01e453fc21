import { execFileSync, spawnSync } from "node:child_process";
import { readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import { parseAllDocuments } from "yaml";

/** deploy/: the kustomize sources live under base/ and overlays/. */
export const deployDir = path.resolve(import.meta.dirname, "..");
export const overlays = ["dev", "prod"] as const;

/** A Kubernetes object as read from YAML: what every check relies on; the rest is per kind. */
export interface Resource {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string> };
  [field: string]: unknown;
}

export function parseYaml(text: string, source: string): unknown[] {
  return parseAllDocuments(text).flatMap((doc) => {
    const [error] = doc.errors;
    if (error) throw new Error(`${source}: ${error.message}`);
    const value: unknown = doc.toJS();
    return value == null ? [] : [value];
  });
}

export function asResource(value: unknown, source: string): Resource {
  const r = value as (Partial<Resource> & { metadata?: { generateName?: string } }) | null;
  const name = r?.metadata?.name ?? r?.metadata?.generateName;
  if (typeof r?.apiVersion !== "string" || typeof r.kind !== "string" || typeof name !== "string") {
    throw new Error(`${source}: not a Kubernetes object (apiVersion, kind and metadata.name are required)`);
  }
  // A Job created with generateName is reported by that prefix.
  return (r.metadata?.name ? r : { ...r, metadata: { ...r.metadata, name } }) as Resource;
}

/** A Kubernetes object read from one YAML file of deploy/ (e.g. operator/avatarctl-job.yaml). */
export function readObjects(file: string): Resource[] {
  return parseYaml(readFileSync(path.join(deployDir, file), "utf8"), file).map((d) => asResource(d, file));
}

/** `kubectl version --client` when kubectl is on PATH, else undefined. */
export function kubectlVersion(): string | undefined {
  const result = spawnSync("kubectl", ["version", "--client"], { encoding: "utf8" });
  return result.status === 0 ? result.stdout.trim().replace(/\n/g, ", ") : undefined;
}

/** The output of `kubectl kustomize` for a folder relative to deploy/ (offline: no cluster needed). */
export function render(folder: string): Resource[] {
  const out = execFileSync("kubectl", ["kustomize", path.join(deployDir, folder)], {
    encoding: "utf8",
    maxBuffer: 16 * 1024 * 1024,
  });
  return parseYaml(out, folder).map((doc) => asResource(doc, folder));
}

/** How a kustomization uses a YAML file of its folder; "unused" means no kustomization.yaml lists it. */
export type Role = "kustomization" | "resource" | "patch" | "unused";

export interface SourceFile {
  /** Relative to deploy/, e.g. "base/gateway.yaml". */
  file: string;
  role: Role;
  documents: unknown[];
}

interface Kustomization {
  resources?: string[];
  patches?: { path?: string }[];
}

/**
 * Every YAML file under deploy/base, deploy/components and deploy/overlays, with the role its folder's
 * kustomization gives it.
 */
export function readSources(): SourceFile[] {
  const files = ["base", "components", "overlays"].flatMap((top) =>
    yamlFilesUnder(path.join(deployDir, top)),
  );
  const roles = new Map<string, Role>();
  for (const file of files.filter((f) => path.basename(f) === "kustomization.yaml")) {
    roles.set(file, "kustomization");
    const [doc] = parseYaml(readFileSync(file, "utf8"), file);
    const k = (doc ?? {}) as Kustomization;
    const dir = path.dirname(file);
    for (const entry of k.resources ?? []) roles.set(path.resolve(dir, entry), "resource");
    for (const patch of k.patches ?? []) if (patch.path) roles.set(path.resolve(dir, patch.path), "patch");
  }
  return files.map((file) => ({
    file: path.relative(deployDir, file),
    role: roles.get(file) ?? "unused",
    documents: parseYaml(readFileSync(file, "utf8"), file),
  }));
}

function yamlFilesUnder(dir: string): string[] {
  return readdirSync(dir)
    .sort()
    .flatMap((name) => {
      const full = path.join(dir, name);
      if (statSync(full).isDirectory()) return yamlFilesUnder(full);
      return /\.ya?ml$/.test(name) ? [full] : [];
    });
}
