/**
 * The drawing's version (generate-look.ts): a store that keeps generated looks regenerates those made by
 * another version (bump it whenever a change to the drawing alters what a seed gives).
 */
export const LOOK_GENERATOR_VERSION = "2";
