/**
 * What Cairn costs an app's browser bundle (issue #18): small apps importing the built package
 * ("cairndb", dist/mod.browser.js for a browser, as an app's bundler takes it) are bundled by
 * esbuild, minified, and gzipped; the figures are printed (docs/browser.md reports them).
 * Asserted: importing less costs less (tree-shaking works), and no app carries what a browser never
 * runs; not any absolute size. Also: dist/browser/ ships minified with a source map.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { gzipSync } from "node:zlib";
import * as esbuild from "esbuild";

/** Three apps, each importing less than the one before. */
const APPS = {
  "full app (open, schema, create, live query, sync)": `
    import { Cairn, defineSchema, sync } from "cairndb";
    const Task = defineSchema({ ns: "task", version: 1, fields: { title: { type: "string", required: true } } });
    const db = await Cairn.open({ path: "app/db" });
    const repo = await db.open("/tasks");
    repo.create(Task, { title: "hello" });
    repo.query({ schema: Task, sortBy: "title" }).subscribe((tasks) => console.log(tasks.length));
    sync(db, "wss://sync.example.com");
  `,
  "open + get": `
    import { Cairn } from "cairndb";
    const db = await Cairn.open({ path: "app/db" });
    console.log((await db.open("/tasks")).get("a")?.toObject());
  `,
  "commit codec only": `
    import { decodeCommit } from "cairndb";
    console.log(decodeCommit(new Uint8Array([0x90])));
  `,
};

interface Size {
  minified: number;
  gzipped: number;
  code: string;
}

async function measure(source: string): Promise<Size> {
  const result = await esbuild.build({
    stdin: { contents: source, resolveDir: ".", loader: "js", sourcefile: "app.js" },
    bundle: true,
    minify: true,
    format: "esm",
    platform: "browser",
    target: "es2022",
    write: false,
    logLevel: "silent",
  });
  const bytes = result.outputFiles[0].contents;
  return {
    minified: bytes.length,
    gzipped: gzipSync(bytes).length,
    code: result.outputFiles[0].text,
  };
}

function kb(bytes: number): string {
  return `${(bytes / 1000).toFixed(1)} KB`;
}

test("bundle size: each app that imports less of cairndb bundles smaller (tree-shaking works)", async () => {
  const sizes: Size[] = [];
  try {
    for (const [name, source] of Object.entries(APPS)) {
      const size = await measure(source);
      sizes.push(size);
      console.log(`  ${name}: ${kb(size.minified)} minified, ${kb(size.gzipped)} min+gz`);
    }
  } finally {
    await esbuild.stop();
  }
  // Bundled for a browser, "cairndb" is dist/mod.browser.js: no file backend (its writer lock
  // file's name), no node:crypto suite (the module name it imports by a variable).
  for (const [i, name] of Object.keys(APPS).entries()) {
    assert.doesNotMatch(sizes[i].code, /writer\.lock/, `${name} carries the file backend`);
    assert.doesNotMatch(sizes[i].code, /node:crypto/, `${name} carries node:crypto's suite`);
  }
  for (let i = 1; i < sizes.length; i++) {
    assert.ok(
      sizes[i].gzipped < sizes[i - 1].gzipped,
      `${Object.keys(APPS)[i]} (${sizes[i].gzipped} B) is not smaller than ` +
        `${Object.keys(APPS)[i - 1]} (${sizes[i - 1].gzipped} B)`,
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
