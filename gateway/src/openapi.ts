import type { Route } from "./http/route.js";
import { API_DESCRIPTION } from "./openapi-description.js";
import { type Components, type JsonSchema, toJsonSchema } from "./schema/json-schema.js";
import { ParamsSchema } from "./schema/params.js";
import { Schema } from "./schema/schema.js";

/** The interface version the machine-readable description carries (interface.md, Versioning). */
export const INTERFACE_VERSION = "0.1.0";

const security: Record<Route["auth"], Record<string, string[]>[]> = {
  none: [],
  api_key: [{ ApiKey: [] }],
  session_token: [{ SessionToken: [] }],
  api_key_or_session: [{ ApiKey: [] }, { SessionToken: [] }],
  api_key_or_cookie: [{ ApiKey: [] }, { SessionToken: [] }, { SessionCookie: [] }],
};

const envelope = (data: JsonSchema = {}): JsonSchema => ({
  type: "object",
  required: ["code", "data", "message"],
  properties: { code: { type: "integer" }, data: data, message: { type: "string" } },
});

const validationError: JsonSchema = {
  type: "object",
  required: ["detail"],
  properties: {
    detail: {
      type: "array",
      items: {
        type: "object",
        required: ["loc", "msg", "type"],
        properties: {
          loc: { type: "array", items: { anyOf: [{ type: "string" }, { type: "integer" }] } },
          msg: { type: "string" },
          type: { type: "string" },
          input: {},
          ctx: { type: "object" },
        },
      },
    },
  },
};

const operationId = (r: Route) =>
  `${r.method.toLowerCase()}_${r.path
    .replace(/[{}]/g, "")
    .replace(/[^A-Za-z0-9]+/g, "_")
    .replace(/^_|_$/g, "")}`;

/** The OpenAPI 3.1 document of the public API, built from the route table and its request schemas. */
export function openApiDocument(routes: readonly Route[], baseUrl: string): JsonSchema {
  const components: Components = {};
  const paths: Record<string, Record<string, JsonSchema>> = {};
  for (const r of routes) {
    const parameters = [r.params, r.query].flatMap((p) =>
      p instanceof ParamsSchema ? p.openApiParameters(components) : [],
    );
    const success: JsonSchema = r.textBody
      ? {
          description: "Success",
          content: { [r.textBody]: { schema: { type: "string" } } },
          headers: { Location: { description: "The resource to DELETE", schema: { type: "string" } } },
        }
      : r.status === 204
        ? { description: "No content" }
        : { description: "Success", content: { "application/json": { schema: envelope() } } };
    const op: JsonSchema = {
      operationId: operationId(r),
      summary: r.summary,
      security: security[r.auth],
      parameters,
      responses: {
        [String(r.status ?? 200)]: success,
        "422": {
          description: "Validation error",
          content: { "application/json": { schema: { $ref: "#/components/schemas/HTTPValidationError" } } },
        },
        "429": {
          description: "Rate limit exceeded",
          content: { "application/json": { schema: envelope({ type: "null" }) } },
        },
        default: {
          description: "Error envelope (code = HTTP status x 10)",
          content: { "application/json": { schema: envelope({ type: "null" }) } },
        },
      },
    };
    if (r.body instanceof Schema) {
      op.requestBody = {
        required: !r.optionalBody,
        content: { "application/json": { schema: toJsonSchema(r.body, components) } },
      };
    }
    if (r.textBody) {
      op.requestBody = { required: true, content: { [r.textBody]: { schema: { type: "string" } } } };
    }
    paths[r.path] ??= {};
    (paths[r.path] as Record<string, JsonSchema>)[r.method.toLowerCase()] = op;
  }
  return {
    openapi: "3.1.0",
    info: { title: "Avatar session service", version: INTERFACE_VERSION, description: API_DESCRIPTION },
    servers: [{ url: baseUrl }],
    paths,
    components: {
      schemas: { ...components, HTTPValidationError: validationError },
      securitySchemes: {
        ApiKey: { type: "apiKey", in: "header", name: "X-API-KEY" },
        SessionToken: { type: "http", scheme: "bearer", bearerFormat: "JWT" },
        SessionCookie: { type: "apiKey", in: "cookie", name: "la_session" },
      },
    },
  };
}
