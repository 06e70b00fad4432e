/**
 * Which kind of runtime this is. Deno and Node have the `node:` modules (files, crypto); a
 * browser has none, and asking for one there logs a failed script load in the page's console.
 */
export function hasNodeModules(): boolean {
  return "Deno" in globalThis ||
    typeof (globalThis as { process?: { versions?: { node?: string } } }).process?.versions
        ?.node === "string";
}
