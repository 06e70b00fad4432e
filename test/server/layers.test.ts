/**
 * Imports in src/ only go down the layers of docs/architecture.md, so there is no cycle between
 * layers. Static imports and re-exports are read from the sources; a file at the top of src/ (an
 * entry point such as mod.ts) may import anything.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { readdir, readFile } from "node:fs/promises";
import { dirname, join, normalize, relative } from "node:path";

/** What each layer may import besides itself. */
const MAY_IMPORT: Record<string, readonly string[]> = {
  core: [],
  runtime: ["core"],
  storage: ["runtime", "core"],
  repo: ["core"],
  query: ["repo", "runtime", "core"],
  // The tabs of one stored database in a browser (docs/browser.md, "Many tabs"): what db/ uses
  // when Cairn.open finds another tab holding the database.
  tabs: ["repo", "storage", "runtime", "core"],
  db: ["tabs", "query", "repo", "storage", "runtime", "core"],
  sync: ["db", "tabs", "query", "repo", "storage", "runtime", "core"],
  cli: ["sync", "db", "tabs", "query", "repo", "storage", "runtime", "core"],
  // The React bindings reach every layer through the public entry "cairndb" only (src/react.ts).
  react: [],
};

const SRC = "src";
const IMPORT = /(?:^|\n)\s*(?:import|export)\b[^;]*?\bfrom\s+"([^"]+)"/g;

async function sourceFiles(dir: string): Promise<string[]> {
  const files: string[] = [];
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) files.push(...await sourceFiles(path));
    else if (entry.name.endsWith(".ts")) files.push(path);
  }
  return files;
}

/** The layer a path under src/ belongs to; undefined for an entry point at the top of src/. */
function layerOf(path: string): string | undefined {
  const parts = relative(SRC, path).split(/[\\/]/);
  return parts.length > 1 ? parts[0] : undefined;
}

/** Every import of a file in src/ that breaks the layering, as "from → to" lines. */
async function upwardImports(): Promise<string[]> {
  const found: string[] = [];
  for (const file of await sourceFiles(SRC)) {
    const layer = layerOf(file);
    if (layer === undefined) continue;
    const allowed = MAY_IMPORT[layer];
    if (!allowed) {
      found.push(`${file}: layer "${layer}" is not in docs/architecture.md's list`);
      continue;
    }
    const text = await readFile(file, "utf8");
    for (const [, specifier] of text.matchAll(IMPORT)) {
      if (!specifier.startsWith(".")) continue; // a package, or a node: built-in
      const target = normalize(join(dirname(file), specifier));
      const targetLayer = layerOf(target);
      if (targetLayer === layer) continue;
      if (targetLayer === undefined || !allowed.includes(targetLayer)) {
        found.push(`${file} → ${target}`);
      }
    }
  }
  return found;
}

test("src/ imports only go down its layers", async () => {
  assert.deepEqual(await upwardImports(), []);
});

test("the layer check sees imports: src/db reads src/repo, and src/repo is below src/db", async () => {
  // Guards the check itself: if the pattern stopped matching imports, the test above would pass
  // on anything.
  const text = await readFile(join(SRC, "db", "database.ts"), "utf8");
  const specifiers = [...text.matchAll(IMPORT)].map(([, specifier]) => specifier);
  assert.ok(specifiers.includes("../repo/repository.ts"));
  assert.equal(MAY_IMPORT.repo.includes("db"), false);
});
