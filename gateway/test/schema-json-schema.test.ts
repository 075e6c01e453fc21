/**
 * JSON Schema output. The expected documents are what pydantic 2.13 generates for the equivalent models
 * (ref template "#/components/schemas/{model}"), except that an optional field has no `default: null`.
 */
import { describe, expect, it } from "vitest";
import * as s from "../src/schema/index.js";

const Quality = s.enumOf(["very_high", "high", "medium", "low"], { name: "Quality" });
const VideoSettings = s.object("VideoSettings", {
  quality: Quality.default("high"),
  encoding: s.enumOf(["VP8", "H264"]).default("H264").describe("VP8 is deprecated"),
});
const VendorA = s.object("VendorA", {
  provider: s.literal("vendorA").default("vendorA"),
  speed: s.number({ ge: 0.8, le: 1.2 }).default(1),
});
const VendorE = s.object("VendorE", {
  provider: s.literal("vendorE").default("vendorE"),
  latency_mode: s.literal("normal", "balanced", "low").default("balanced"),
});
const Body = s.object(
  "TokenRequest",
  {
    mode: s.literal("FULL").default("FULL"),
    avatar_id: s.uuid(),
    video_settings: VideoSettings.nullable().optional(),
    max_session_duration: s.int({ ge: 1 }).optional(),
    temperature: s.number({ gt: 0, lt: 2 }).default(0.8),
    voice_settings: s
      .discriminatedUnion("provider", { vendorA: VendorA, vendorE: VendorE })
      .nullable()
      .optional(),
    dynamic_variables: s
      .record(s.string({ maxLength: 1000 }), { maxEntries: 50, keyMaxLength: 64 })
      .optional(),
    vars: s.record(s.union([s.string(), s.int(), s.number(), s.boolean()])).optional(),
    links: s.array(s.httpUrl(), { minItems: 1, maxItems: 20 }).optional(),
    created_after: s.datetime().optional(),
  },
  { description: "Mints a session token." },
);

describe("toJsonSchema", () => {
  it("puts named objects and enums into components and refers to them", () => {
    const components: s.Components = {};
    expect(s.toJsonSchema(Body, components)).toEqual({ $ref: "#/components/schemas/TokenRequest" });
    expect(components).toEqual({
      Quality: { enum: ["very_high", "high", "medium", "low"], type: "string", title: "Quality" },
      VideoSettings: {
        type: "object",
        title: "VideoSettings",
        properties: {
          quality: { $ref: "#/components/schemas/Quality", default: "high" },
          encoding: {
            enum: ["VP8", "H264"],
            type: "string",
            default: "H264",
            description: "VP8 is deprecated",
            title: "Encoding",
          },
        },
      },
      VendorA: {
        type: "object",
        title: "VendorA",
        properties: {
          provider: { const: "vendorA", type: "string", default: "vendorA", title: "Provider" },
          speed: { type: "number", minimum: 0.8, maximum: 1.2, default: 1, title: "Speed" },
        },
      },
      VendorE: {
        type: "object",
        title: "VendorE",
        properties: {
          provider: { const: "vendorE", type: "string", default: "vendorE", title: "Provider" },
          latency_mode: {
            enum: ["normal", "balanced", "low"],
            type: "string",
            default: "balanced",
            title: "Latency Mode",
          },
        },
      },
      TokenRequest: {
        type: "object",
        title: "TokenRequest",
        description: "Mints a session token.",
        properties: {
          mode: { const: "FULL", type: "string", default: "FULL", title: "Mode" },
          avatar_id: { type: "string", format: "uuid", title: "Avatar Id" },
          video_settings: { anyOf: [{ $ref: "#/components/schemas/VideoSettings" }, { type: "null" }] },
          max_session_duration: { type: "integer", minimum: 1, title: "Max Session Duration" },
          temperature: {
            type: "number",
            exclusiveMinimum: 0,
            exclusiveMaximum: 2,
            default: 0.8,
            title: "Temperature",
          },
          voice_settings: {
            anyOf: [
              {
                oneOf: [{ $ref: "#/components/schemas/VendorA" }, { $ref: "#/components/schemas/VendorE" }],
                discriminator: {
                  propertyName: "provider",
                  mapping: {
                    vendorA: "#/components/schemas/VendorA",
                    vendorE: "#/components/schemas/VendorE",
                  },
                },
              },
              { type: "null" },
            ],
            title: "Voice Settings",
          },
          dynamic_variables: {
            type: "object",
            additionalProperties: { type: "string", maxLength: 1000 },
            propertyNames: { maxLength: 64 },
            maxProperties: 50,
            title: "Dynamic Variables",
          },
          vars: {
            type: "object",
            additionalProperties: {
              anyOf: [{ type: "string" }, { type: "integer" }, { type: "number" }, { type: "boolean" }],
            },
            title: "Vars",
          },
          links: {
            type: "array",
            items: { type: "string", format: "uri", minLength: 1, maxLength: 2083 },
            minItems: 1,
            maxItems: 20,
            title: "Links",
          },
          created_after: { type: "string", format: "date-time", title: "Created After" },
        },
        required: ["avatar_id"],
      },
    });
  });

  it("a schema used twice is registered once", () => {
    const components: s.Components = {};
    const Pair = s.object("Pair", { first: VideoSettings, second: VideoSettings.describe("the other one") });
    s.toJsonSchema(Pair, components);
    expect(Object.keys(components)).toEqual(["Quality", "VideoSettings", "Pair"]);
    expect(components.Pair?.properties).toEqual({
      first: { $ref: "#/components/schemas/VideoSettings" },
      second: { $ref: "#/components/schemas/VideoSettings", description: "the other one" },
    });
    expect(components.Pair?.required).toEqual(["first", "second"]);
  });

  it("refuses two different schemas under one name", () => {
    const components: s.Components = {};
    s.toJsonSchema(s.object("Thing", { a: s.int() }), components);
    expect(() => s.toJsonSchema(s.object("Thing", { a: s.string() }), components)).toThrow(
      /two different schemas are named Thing/,
    );
  });

  it("renders scalars inline", () => {
    expect(s.toJsonSchema(s.string({ minLength: 1 }).nullable())).toEqual({
      anyOf: [{ type: "string", minLength: 1 }, { type: "null" }],
    });
    expect(s.toJsonSchema(s.literal(1, 2))).toEqual({ enum: [1, 2], type: "integer" });
    expect(s.toJsonSchema(s.url())).toEqual({ type: "string", format: "uri", minLength: 1 });
    expect(s.toJsonSchema(s.boolean().describe("flag"))).toEqual({ type: "boolean", description: "flag" });
  });
});
