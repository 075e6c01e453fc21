import type { Migrations } from "@avatar/runtime";
import * as spacesAndKeys from "./20261122_0001_spaces_and_keys.js";

export const migrations: Migrations = {
  "20261122_0001_spaces_and_keys": spacesAndKeys,
};
