import path from "node:path";
import ts from "typescript";
import type { Resource } from "./manifests.js";
import { modelModuleOf } from "./models.js";

/**
 * Strict validation of Kubernetes objects: each object is written as an object literal typed with its
 * kind's interface (kubernetes-models, and the Gateway API and cert-manager models for those groups) and
 * type-checked with tsc. Unlike the models' runtime schemas, this rejects unknown fields (`perodSeconds`
 * is an excess property) as well as wrong types and unknown kinds.
 */

export interface Labelled {
  /** Where the objects come from, e.g. "overlays/prod" or a file name. */
  where: string;
  resources: Resource[];
}

/** One line per problem: `<where>: <Kind>/<name>: <tsc's message>`. */
export function strictTypeProblems(sets: Labelled[]): string[] {
  const imports = new Map<string, string>();
  const lines: string[] = [];
  const owners: { from: number; to: number; name: string }[] = [];
  for (const { where, resources } of sets) {
    for (const r of resources) {
      const module = modelModuleOf(r.apiVersion);
      const alias = imports.get(module) ?? `m${imports.size}`;
      imports.set(module, alias);
      const literal = JSON.stringify(r, null, 1).split("\n");
      const from = lines.length;
      lines.push(`export const r${owners.length}: ${alias}.I${r.kind} = ${literal[0]}`, ...literal.slice(1));
      owners.push({ from, to: lines.length - 1, name: `${where}: ${r.kind}/${r.metadata.name}` });
    }
  }
  const header = [...imports].map(([module, alias]) => `import type * as ${alias} from "${module}";`);
  const source = [...header, ...lines].join("\n");
  const offset = header.length;

  // A file beside this one, so that its imports resolve from the repository's node_modules.
  const fileName = path.join(import.meta.dirname, "__rendered_objects__.ts");
  const options: ts.CompilerOptions = {
    strict: true,
    noEmit: true,
    skipLibCheck: true,
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    types: [],
  };
  const host = ts.createCompilerHost(options);
  const base = { getSourceFile: host.getSourceFile, fileExists: host.fileExists, readFile: host.readFile };
  host.getSourceFile = (name, version, ...rest) =>
    name === fileName
      ? ts.createSourceFile(name, source, version)
      : base.getSourceFile.call(host, name, version, ...rest);
  host.fileExists = (name) => name === fileName || base.fileExists.call(host, name);
  host.readFile = (name) => (name === fileName ? source : base.readFile.call(host, name));
  const program = ts.createProgram([fileName], options, host);
  const file = program.getSourceFile(fileName);
  const diagnostics = [...program.getSyntacticDiagnostics(file), ...program.getSemanticDiagnostics(file)];
  return diagnostics.map((d) => {
    const line =
      d.start === undefined || !file ? -1 : file.getLineAndCharacterOfPosition(d.start).line - offset;
    const owner = owners.find((o) => line >= o.from && line <= o.to);
    return `${owner?.name ?? "(imports)"}: ${ts.flattenDiagnosticMessageText(d.messageText, " ")}`;
  });
}
