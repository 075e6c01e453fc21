export * from "./frames.js";
export type { AvatarVideoGenerator, PhonemeMark } from "./video-generator.js";
