/**
 * Request schemas of the public API. One definition gives validation with FastAPI/pydantic v2 422
 * entries, the TypeScript type of the parsed value (`Infer`), and its JSON Schema for OpenAPI 3.1.
 */
export { type ArraySchema, array, type SizeOptions } from "./array.js";
export { type BooleanSchema, boolean } from "./boolean.js";
export { type EnumSchema, enumOf, type LiteralSchema, literal, type Primitive } from "./choice.js";
export { type DateTimeSchema, datetime } from "./datetime.js";
export {
  issue,
  type Loc,
  missing,
  type ParseResult,
  type ValidationIssue,
  validationErrorBody,
  valueError,
} from "./issues.js";
export { type JsonBodyResult, parseBody, parseJsonBody } from "./json-body.js";
export { type DecodeResult, decodeJson } from "./json-decode.js";
export { type Components, componentRef, type JsonSchema, toJsonSchema } from "./json-schema.js";
export { type IntSchema, int, type NumberBounds, type NumberSchema, number } from "./numeric.js";
export { type ObjectOptions, type ObjectOutput, type ObjectSchema, object, type Shape } from "./object.js";
export { type OpenApiParameter, type ParamsSchema, type ParamValues, path, query } from "./params.js";
export { type RecordOptions, type RecordSchema, record } from "./record.js";
export {
  type DefaultSchema,
  type Infer,
  type NullableSchema,
  type OptionalSchema,
  Schema,
} from "./schema.js";
export { type StringOptions, type StringSchema, string } from "./string.js";
export { type DiscriminatedUnionSchema, discriminatedUnion, type UnionSchema, union } from "./union.js";
export { httpUrl, type UrlOptions, type UrlSchema, url } from "./url.js";
export { type UuidSchema, uuid } from "./uuid.js";
