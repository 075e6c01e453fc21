import { randomUUID } from "node:crypto";
import { AvatarStatus } from "@avatar/contracts/catalog";
import { describe, expect, it } from "vitest";
import { UsageError } from "../src/errors.js";
import { entriesOf, toAvatars, toVoices } from "../src/import-file.js";

/** Import files to Connect messages, without any service. */

const voiceId = randomUUID();
const avatarId = randomUUID();
const spaceId = randomUUID();

describe("entriesOf", () => {
  it("accepts an array or an object with the kind's array", () => {
    expect(entriesOf('[{"name":"A"}]', "f.json", "voices")).toEqual([{ name: "A" }]);
    expect(entriesOf('{"voices":[{"name":"A"}],"other":1}', "f.json", "voices")).toEqual([{ name: "A" }]);
  });

  it.each([
    ["{", /f.json is not valid JSON/],
    [
      '{"avatars":[]}',
      /f.json: expected a JSON array of voices, or an object whose "voices" is an array \(its keys: avatars\)/,
    ],
    ['"voices"', /expected a JSON array/],
    ["[]", /f.json: no voices to import/],
    ['[{"name":"A"}, 3]', /f.json: voices\[1\] is not an object/],
  ])("refuses %s", (text, message) => {
    expect(() => entriesOf(text, "f.json", "voices")).toThrow(message);
    expect(() => entriesOf(text, "f.json", "voices")).toThrow(UsageError);
  });
});

describe("toAvatars", () => {
  const entry = {
    id: avatarId,
    name: "Ada",
    type: "VIDEO",
    status: "DEACTIVATED",
    preview_url: "https://example.invalid/ada.webp",
    default_voice_id: voiceId,
    is_1080p: true,
    sandbox_enabled: true,
  };

  it("maps the catalog file's snake_case fields, public without a space", () => {
    expect(toAvatars([entry], "f.json", { public: true })).toEqual([
      {
        id: avatarId,
        name: "Ada",
        type: "VIDEO",
        status: AvatarStatus.DEACTIVATED,
        previewUrl: "https://example.invalid/ada.webp",
        defaultVoice: { id: voiceId },
        defaultVoiceAgentId: "",
        is1080p: true,
        sandboxEnabled: true,
        spaceId: "",
        isPublic: true,
      },
    ]);
  });

  it("makes entries private to the given space, with ACTIVE and no voice by default", () => {
    const [avatar] = toAvatars([{ name: "Bo", default_voice_id: null }], "f.json", { spaceId });
    expect(avatar).toMatchObject({ spaceId, isPublic: false, status: AvatarStatus.ACTIVE, id: "" });
    expect(avatar?.defaultVoice).toBeUndefined();
  });

  it.each([
    [{ id: avatarId }, /f.json: avatars\[0\]: name is required/],
    [{ name: "" }, /name is required/],
    [{ name: "A", id: "ada" }, /avatars\[0\]: id must be a UUID \(got "ada"\)/],
    [{ name: "A", default_voice_id: "ava" }, /default_voice_id must be a UUID/],
    [{ name: "A", status: "active" }, /status must be one of ACTIVE, INIT, DEACTIVATED, DELETED/],
    [{ name: "A", is_1080p: "yes" }, /is_1080p must be true or false/],
    [{ name: "A", space_id: spaceId }, /unknown field "space_id"/],
  ])("refuses %j", (bad, message) => {
    expect(() => toAvatars([bad], "f.json", { public: true })).toThrow(message);
  });
});

describe("toVoices", () => {
  it("maps engines and provider ids", () => {
    const [voice] = toVoices(
      [
        {
          id: voiceId,
          name: "Ava",
          language: "en",
          gender: "female",
          voice_engines: ["vendorA"],
          provider_voice_ids: { vendorA: "a-1" },
        },
      ],
      "f.json",
      { public: true },
    );
    expect(voice).toMatchObject({
      id: voiceId,
      voiceEngines: ["vendorA"],
      providerVoiceIds: { vendorA: "a-1" },
      isPublic: true,
    });
  });

  it.each([
    [{ name: "Ava", voice_engines: "vendorA" }, /voice_engines must be an array of strings/],
    [{ name: "Ava", provider_voice_ids: { vendorA: 1 } }, /provider_voice_ids must be an object of strings/],
    [{ name: 7 }, /voices\[0\]: name must be a string/],
  ])("refuses %j", (bad, message) => {
    expect(() => toVoices([bad], "f.json", { public: true })).toThrow(message);
  });
});
