/**
 * `node:assert/strict` in the browser test bundle (scripts/lib/bundles.ts aliases it here): the
 * strict mode of the npm package "assert", browserify's port of Node's own assert module, so a
 * test asserts the same thing in Chromium as on Deno and Node. The package's default export is
 * Node's legacy mode (loose `equal` and `deepEqual`), which is why test files cannot be handed
 * the package itself.
 */
import { strict } from "assert";

export default strict;
export { strict };
