/**
 * What Cairn costs an app's browser bundle (issue #18): small apps importing the built package
 * ("cairndb", dist/modules/ for a browser, as an app's bundler takes it) are bundled by
 * esbuild, minified, split at dynamic imports (as Vite does) and gzipped; the figures of what a
 * page loads at start, and of what it loads later where WebCrypto lacks Ed25519, are printed
 * (docs/browser.md reports them). Asserted: importing less costs less (tree-shaking works), no app
 * carries what a browser never runs, and @noble/ed25519 is not loaded at start; not any absolute
 * size. Also: dist/browser/ ships minified with a source map.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import * as esbuild from "esbuild";
import { BUNDLE_APPS, bundleApp, type BundleFiles } from "../../scripts/lib/bundle_size.ts";

function kb(bytes: number): string {
  return `${(bytes / 1000).toFixed(1)} KB`;
}

test("bundle size: each app that imports less of cairndb bundles smaller (tree-shaking works)", async () => {
  const sizes: BundleFiles[] = [];
  const lazy: BundleFiles[] = [];
  try {
    for (const { name, source } of BUNDLE_APPS) {
      const bundle = await bundleApp(source, "package");
      sizes.push(bundle.start);
      lazy.push(bundle.lazy);
      console.log(
        `  ${name}: ${kb(bundle.start.minified)} minified, ${kb(bundle.start.gzipped)} min+gz ` +
          `at start; ${kb(bundle.lazy.gzipped)} min+gz more where WebCrypto lacks Ed25519`,
      );
    }
  } finally {
    await esbuild.stop();
  }
  // @noble/ed25519 is loaded only where WebCrypto lacks Ed25519: not at start.
  for (const [i, { name }] of BUNDLE_APPS.entries()) {
    const noble = (input: string) => input.includes("@noble/ed25519");
    assert.ok(!sizes[i].inputs.some(noble), `${name} loads @noble/ed25519 at start`);
    if (i < 2) assert.ok(lazy[i].inputs.some(noble), `${name} cannot load @noble/ed25519`);
  }
  // Bundled for a browser, "cairndb" is dist/modules/: no file backend (its writer lock
  // file's name), no node:crypto suite (the module name it imports by a variable).
  for (const [i, { name }] of BUNDLE_APPS.entries()) {
    assert.doesNotMatch(sizes[i].code, /writer\.lock/, `${name} carries the file backend`);
    assert.doesNotMatch(sizes[i].code, /node:crypto/, `${name} carries node:crypto's suite`);
  }
  // The package's modules stay apart, so the bundler keeps only those an app reaches: decoding
  // commits needs the codec and msgpack, none of the database, storage, text or sync.
  const codecOnly = BUNDLE_APPS.findIndex(({ name }) => name === "commit codec only");
  const cairnModules = sizes[codecOnly].inputs.filter((input) => input.startsWith("dist/"));
  assert.ok(cairnModules.includes("dist/modules/core/commit_codec.js"), cairnModules.join());
  for (const input of cairnModules) {
    assert.match(input, /^dist\/modules\/core\/[a-z_]+\.js$/, "the commit codec app carries it");
  }
  for (let i = 1; i < sizes.length; i++) {
    assert.ok(
      sizes[i].gzipped < sizes[i - 1].gzipped,
      `${BUNDLE_APPS[i].name} (${sizes[i].gzipped} B) is not smaller than ` +
        `${BUNDLE_APPS[i - 1].name} (${sizes[i - 1].gzipped} B)`,
    );
  }
});

test("dist/browser/cairn.js ships minified, with its source map", async () => {
  const code = await readFile("dist/browser/cairn.js", "utf8");
  const map = JSON.parse(await readFile("dist/browser/cairn.js.map", "utf8"));
  // esbuild's minified output puts a whole module on one line; unminified, it has thousands.
  assert.ok(code.split("\n").length < 100, `${code.split("\n").length} lines: not minified`);
  assert.match(code, /\/\/# sourceMappingURL=cairn\.js\.map\s*$/);
  assert.doesNotMatch(code, /writer\.lock/, "dist/browser/cairn.js carries the file backend");
  assert.ok(
    map.sources.some((source: string) => source.endsWith("src/db/database.ts")),
    "the source map names the sources",
  );
  const worker = await readFile("dist/browser/opfs_worker.js", "utf8");
  assert.ok(worker.split("\n").length < 20, "opfs_worker.js is not minified");
});

test("a part left out (bundle:parts) leaves the bundle without its modules, and smaller", async () => {
  const app = BUNDLE_APPS.find(({ name }) => name === "open + get")!;
  try {
    const whole = await bundleApp(app.source, "sources");
    const without = await bundleApp(app.source, "sources", /src\/query\//);
    // A stub keeps its module's name: an error code only query/ raises tells whose code is in.
    assert.match(whole.start.code, /E_QUERY_FAILED/);
    assert.doesNotMatch(without.start.code, /E_QUERY_FAILED/);
    assert.ok(without.start.gzipped < whole.start.gzipped - 1000, "query/ is worth over 1 KB");
  } finally {
    await esbuild.stop();
  }
});
