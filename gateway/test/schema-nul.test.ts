import { describe, expect, it } from "vitest";
import { nulIssues, nulParamIssues } from "../src/schema/nul.js";

const NUL = "\u0000";
const locs = (issues: { loc: (string | number)[] }[]) => issues.map((i) => i.loc);

describe("nulIssues", () => {
  it("places each NUL at its loc: in nested objects, arrays and keys, leaving clean values alone", () => {
    const body = {
      name: "clean",
      links: ["ok", `bad${NUL}`, { deep: [`x${NUL}`] }],
      [`k${NUL}`]: { inner: `v${NUL}` },
      n: 3,
      none: null,
    };
    expect(locs(nulIssues(body, ["body"]))).toEqual([
      ["body", "links", 1],
      ["body", "links", 2, "deep", 0],
      ["body", `k${NUL}`, "[key]"],
      ["body", `k${NUL}`, "inner"],
    ]);
    expect(nulIssues({ a: ["b", { c: "d" }] }, ["body"])).toEqual([]);
  });

  it("keeps the input of each entry and stops at 20 of them", () => {
    const many = Array.from({ length: 30 }, (_, i) => `${i}${NUL}`);
    const issues = nulIssues(many, ["body"]);
    expect(issues).toHaveLength(20);
    expect(issues[3]).toMatchObject({ type: "value_error", loc: ["body", 3], input: `3${NUL}` });
  });
});

describe("nulParamIssues", () => {
  it("checks the names and values of query and path parameters", () => {
    const query = new URLSearchParams([
      ["fine", "yes"],
      [`n${NUL}`, "v"],
      ["v", `x${NUL}`],
    ]);
    expect(nulParamIssues(query, "query").map((i) => [i.loc, i.input])).toEqual([
      [["query", `n${NUL}`], `n${NUL}`],
      [["query", "v"], `x${NUL}`],
    ]);
    expect(locs(nulParamIssues({ session_id: `s${NUL}`, other: "o" }, "path"))).toEqual([
      ["path", "session_id"],
    ]);
    expect(nulParamIssues({ a: "b" }, "path")).toEqual([]);
  });
});
