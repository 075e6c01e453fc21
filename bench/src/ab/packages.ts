import { existsSync } from "node:fs";
import path from "node:path";
import { EXTERNAL } from "@avatar/build/externals";

/**
 * The packages a build of the suite imports at run time (those left out of its bundle) that its
 * `main.js` in `dir` cannot find. A copy of `suite/dist` outside the checkout finds none of them: its
 * sessions then fail to load the media stack, and each logs an error that the measurement counts.
 * Found as an ES module's import finds a package: in `node_modules` of its folder or of a folder above
 * (NODE_PATH, which pnpm's shims set and `require.resolve` reads, does not count for an import).
 */
export function missingPackages(dir: string): string[] {
  const folders: string[] = [];
  for (let at = path.resolve(dir); ; at = path.dirname(at)) {
    folders.push(at);
    if (path.dirname(at) === at) break;
  }
  // A scope's every package ("@ffmpeg-installer/*"): its folder, which holds the one for this platform.
  const marker = (name: string) =>
    name.endsWith("/*") ? name.slice(0, -2) : path.join(name, "package.json");
  return EXTERNAL.filter(
    (name) => !folders.some((at) => existsSync(path.join(at, "node_modules", marker(name)))),
  );
}
