import { describe, expect, it } from "vitest";
import { SubjectIndex, subjectMatches } from "../src/subject.js";

describe("SubjectIndex", () => {
  it("matches literal and wildcard patterns as subjectMatches does, in the order they were added", () => {
    const index = new SubjectIndex<string>();
    const patterns = ["a.b.c", "a.*.c", "a.>", "a.b", "*.b.c", ">", "a.b.c.d", "x.y"];
    for (const p of patterns) index.add(p, p);
    for (const subject of ["a.b.c", "a.b", "a.x.c", "a", "x.y", "a.b.c.d", "q.b.c"]) {
      expect(index.match(subject)).toEqual(patterns.filter((p) => subjectMatches(p, subject)));
    }
  });

  it("keeps several items of one pattern, and forgets what is deleted", () => {
    const index = new SubjectIndex<number>();
    index.add("s.1", 1);
    index.add("s.*", 2);
    index.add("s.1", 3);
    expect(index.match("s.1")).toEqual([1, 2, 3]);
    index.delete("s.1", 1);
    index.delete("s.*", 2);
    expect(index.match("s.1")).toEqual([3]);
    index.delete("s.1", 3);
    index.delete("s.1", 3);
    expect(index.match("s.1")).toEqual([]);
    expect(index.match("s.2")).toEqual([]);
  });
});
