/** Query and path parameters: strings coerced in lax mode, locs ["query", name] / ["path", name]. */
import { describe, expect, expectTypeOf, it } from "vitest";
import * as s from "../src/schema/index.js";

const Page = s.query({
  page: s.int({ ge: 1 }).default(1),
  page_size: s.int({ ge: 1, le: 100 }).default(20).describe("Items per page"),
  is_public: s.boolean().optional(),
  status: s.array(s.enumOf(["INIT", "DEACTIVATED"])).optional(),
  search: s.string({ maxLength: 5 }),
});

describe("query", () => {
  it("coerces strings and applies defaults", () => {
    expect(Page.parse(new URLSearchParams("search=abc&is_public=yes&page=2"))).toEqual({
      ok: true,
      value: { page: 2, page_size: 20, is_public: true, search: "abc" },
    });
  });

  it.each([
    ["page=1&page_size=100&search=a", { page: 1, page_size: 100 }],
    ["page=+3&page_size= 7 &search=a", { page: 3, page_size: 7 }],
  ])("inside the bounds: %s", (query, expected) => {
    expect(Page.parse(new URLSearchParams(query))).toMatchObject({ ok: true, value: expected });
  });

  it("reports every parameter at ['query', name]; a missing one has input null", () => {
    expect(Page.parse(new URLSearchParams("page=0&page_size=101&is_public=maybe"))).toEqual({
      ok: false,
      issues: [
        {
          type: "greater_than_equal",
          loc: ["query", "page"],
          msg: "Input should be greater than or equal to 1",
          input: "0",
          ctx: { ge: 1 },
        },
        {
          type: "less_than_equal",
          loc: ["query", "page_size"],
          msg: "Input should be less than or equal to 100",
          input: "101",
          ctx: { le: 100 },
        },
        {
          type: "bool_parsing",
          loc: ["query", "is_public"],
          msg: "Input should be a valid boolean, unable to interpret input",
          input: "maybe",
        },
        { type: "missing", loc: ["query", "search"], msg: "Field required", input: null },
      ],
    });
  });

  it("an empty value is validated, not treated as absent", () => {
    expect(Page.parse(new URLSearchParams("page=&search=a"))).toEqual({
      ok: false,
      issues: [
        {
          type: "int_parsing",
          loc: ["query", "page"],
          msg: "Input should be a valid integer, unable to parse string as an integer",
          input: "",
        },
      ],
    });
  });

  it("a repeated name: a list field takes all values, another field the last one", () => {
    const params = new URLSearchParams("page=1&page=3&status=INIT&status=DEACTIVATED&search=a");
    expect(Page.parse(params)).toMatchObject({
      ok: true,
      value: { page: 3, status: ["INIT", "DEACTIVATED"] },
    });
    expect(Page.parse({ page: ["2", "4"], search: "a", status: "INIT" })).toMatchObject({
      ok: true,
      value: { page: 4, status: ["INIT"] },
    });
  });

  it("list items are located by index", () => {
    expect(Page.parse(new URLSearchParams("status=INIT&status=x&search=a"))).toMatchObject({
      ok: false,
      issues: [{ type: "enum", loc: ["query", "status", 1], input: "x" }],
    });
  });

  it("describes itself as OpenAPI parameters", () => {
    expect(Page.openApiParameters()).toEqual([
      {
        name: "page",
        in: "query",
        required: false,
        schema: { type: "integer", minimum: 1, default: 1, title: "Page" },
      },
      {
        name: "page_size",
        in: "query",
        required: false,
        description: "Items per page",
        schema: {
          type: "integer",
          minimum: 1,
          maximum: 100,
          default: 20,
          description: "Items per page",
          title: "Page Size",
        },
      },
      { name: "is_public", in: "query", required: false, schema: { type: "boolean", title: "Is Public" } },
      {
        name: "status",
        in: "query",
        required: false,
        schema: { type: "array", items: { enum: ["INIT", "DEACTIVATED"], type: "string" }, title: "Status" },
      },
      {
        name: "search",
        in: "query",
        required: true,
        schema: { type: "string", maxLength: 5, title: "Search" },
      },
    ]);
  });

  it("infers the parsed type", () => {
    expectTypeOf<s.Infer<typeof Page>>().toEqualTypeOf<{
      page: number;
      page_size: number;
      is_public?: boolean;
      status?: ("INIT" | "DEACTIVATED")[];
      search: string;
    }>();
  });
});

describe("path", () => {
  const AvatarPath = s.path({ avatar_id: s.uuid() });

  it("validates at ['path', name]", () => {
    expect(AvatarPath.parse({ avatar_id: "123E4567-E89B-12D3-A456-426614174000" })).toEqual({
      ok: true,
      value: { avatar_id: "123e4567-e89b-12d3-a456-426614174000" },
    });
    expect(AvatarPath.parse({ avatar_id: "abcd" })).toEqual({
      ok: false,
      issues: [
        {
          type: "uuid_parsing",
          loc: ["path", "avatar_id"],
          msg: "Input should be a valid UUID, invalid length: expected length 32 for simple format, found 4",
          input: "abcd",
          ctx: { error: "invalid length: expected length 32 for simple format, found 4" },
        },
      ],
    });
  });

  it("path parameters are always required in OpenAPI", () => {
    expect(AvatarPath.openApiParameters()).toEqual([
      {
        name: "avatar_id",
        in: "path",
        required: true,
        schema: { type: "string", format: "uuid", title: "Avatar Id" },
      },
    ]);
  });
});
