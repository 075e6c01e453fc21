/** The npm packages with native code or WebAssembly that the media stack imports as it loads. */
export const MEDIA_NATIVE_PACKAGES = ["@napi-rs/canvas", "node-datachannel", "opusscript"] as const;

/**
 * Those of them an import from this module's place would not find (a build copied away from its
 * node_modules), looked up without loading any: loading them costs a process ~33 MiB, so the stack
 * itself loads with the first session's media.
 */
export function unresolvedMediaPackages(
  resolve: (specifier: string) => string = (specifier) => import.meta.resolve(specifier),
): string[] {
  return MEDIA_NATIVE_PACKAGES.filter((name) => {
    try {
      resolve(name);
      return false;
    } catch {
      return true;
    }
  });
}
