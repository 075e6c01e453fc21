// biome-ignore-all lint/suspicious/noTemplateCurlyInString: `${name}` placeholders are what these texts are about
import { describe, expect, it } from "vitest";
import { placeholderNames } from "../src/placeholders.js";

describe("placeholderNames", () => {
  it("finds ${name} placeholders of every text, sorted and without repeats", () => {
    expect(placeholderNames("Hi ${user_name}, you are ${age}.", "Welcome ${user_name} to ${Place2}")).toEqual(
      ["Place2", "age", "user_name"],
    );
  });

  it("ignores what is not an identifier between ${ and }", () => {
    expect(placeholderNames("${} ${1st} ${a-b} ${ spaced } $name {x} $${ok}")).toEqual(["ok"]);
  });

  it("finds nothing in empty or plain texts", () => {
    expect(placeholderNames("", "no variables here")).toEqual([]);
  });

  it("takes the innermost placeholder of nested braces", () => {
    expect(placeholderNames("${outer${inner}}")).toEqual(["inner"]);
  });
});
