/**
 * JSON Schema (OpenAPI 3.1 dialect) output. Each schema kind renders itself; this module holds the
 * shared context: the `components.schemas` map that named objects and enums are registered in.
 */
import type { Schema } from "./schema.js";

export type JsonSchema = { [key: string]: unknown };
export type Components = Record<string, JsonSchema>;

export const componentRef = (name: string): string => `#/components/schemas/${name}`;

export class JsonSchemaContext {
  private readonly building = new Set<string>();

  constructor(readonly components: Components) {}

  /**
   * Puts the schema built by `build` under `name` and answers a `$ref` to it. A name already taken by a
   * different schema is a programming error: two request types would silently share one document entry.
   */
  ref(name: string, build: () => JsonSchema): JsonSchema {
    const ref = { $ref: componentRef(name) };
    if (this.building.has(name)) return ref;
    this.building.add(name);
    try {
      const built = build();
      const existing = this.components[name];
      if (existing !== undefined && JSON.stringify(existing) !== JSON.stringify(built)) {
        throw new Error(`two different schemas are named ${name}`);
      }
      this.components[name] = built;
    } finally {
      this.building.delete(name);
    }
    return ref;
  }

  of(schema: Schema<unknown>): JsonSchema {
    return schema.jsonSchema(this);
  }
}

/**
 * The JSON Schema of `schema`. Named objects (and named enums) are added to `components` and referenced
 * as `#/components/schemas/<Name>`; pass the same map for every schema of one OpenAPI document.
 */
export function toJsonSchema(schema: Schema<unknown>, components: Components = {}): JsonSchema {
  return new JsonSchemaContext(components).of(schema);
}
