/**
 * What Cairn costs an app's browser bundle (issue #18). Small apps importing "cairndb" are bundled
 * as an app's bundler does it — esbuild, minified, split at dynamic imports as Vite splits — and
 * each output file is gzipped on its own, as a server sends it. What a page loads at start (the
 * entry and what it imports statically) is counted apart from what it loads later, by a dynamic
 * import, when that code first runs. test/server/bundle_size.test.ts measures the built package;
 * the bench runner, without building it, bundles the apps from the sources the package's browser
 * modules are built from, and records the sizes in its envelope.
 */
import { readFile } from "node:fs/promises";
import { gzipSync } from "node:zlib";
import * as esbuild from "esbuild";
import { resolve } from "node:path";
import { BROWSER_SOURCES_BUILD } from "./bundles.ts";

export interface BundleApp {
  readonly name: string;
  readonly source: string;
}

/** Three apps, each importing less of Cairn than the one before. */
export const BUNDLE_APPS: readonly BundleApp[] = [{
  name: "full app (open, schema, create, live query, sync)",
  source: `
    import { Cairn, defineSchema, sync } from "cairndb";
    const Task = defineSchema({ ns: "task", version: 1, fields: { title: { type: "string", required: true } } });
    const db = await Cairn.open({ path: "app/db" });
    const repo = await db.open("/tasks");
    repo.create(Task, { title: "hello" });
    repo.query({ schema: Task, sortBy: "title" }).subscribe((tasks) => console.log(tasks.length));
    sync(db, "wss://sync.example.com");
  `,
}, {
  name: "open + get",
  source: `
    import { Cairn } from "cairndb";
    const db = await Cairn.open({ path: "app/db" });
    console.log((await db.open("/tasks")).get("a")?.toObject());
  `,
}, {
  name: "commit codec only",
  source: `
    import { decodeCommit } from "cairndb";
    console.log(decodeCommit(new Uint8Array([0x90])));
  `,
}];

export interface BundleFiles {
  minified: number;
  /** Each file gzipped on its own, summed. */
  gzipped: number;
  code: string;
  /** The modules bundled into these files. */
  inputs: string[];
}

export interface AppBundle {
  /** What a page loads at start. */
  start: BundleFiles;
  /** What it may load later, by a dynamic import (@noble/ed25519, where WebCrypto lacks Ed25519). */
  lazy: BundleFiles;
}

/**
 * Where "cairndb" comes from: the built package (dist/, as apps get it), or the sources its
 * browser modules are built from, one for one (dist/modules/: see bundles.ts), with the same
 * browser halves and inline worker: the same modules, without building dist/ (the sizes differ
 * by about 0.1 KB, esbuild minifying TypeScript and its own output a little differently).
 */
export type CairnFrom = "package" | "sources";

/** "cairndb" as src/mod.ts, reached as the package's browser modules reach it. */
const CAIRNDB_FROM_SOURCES: esbuild.Plugin = {
  name: "cairndb-from-sources",
  setup(build) {
    build.onResolve({ filter: /^cairndb$/ }, () => ({ path: resolve("src/mod.ts") }));
  },
};

/**
 * Replaces each source module whose path matches `leftOut` by a stub exporting its names, all
 * undefined: what an app would load if nothing reached those modules. Such a bundle does not
 * run; it prices a part of Cairn (scripts/bundle_parts.ts).
 */
function leaveOut(leftOut: RegExp): esbuild.Plugin {
  return {
    name: "leave-out",
    setup(build) {
      build.onLoad({ filter: /[\\/]src[\\/].*\.ts$/ }, async ({ path }) => {
        if (!leftOut.test(path.replaceAll("\\", "/"))) return undefined;
        const source = await readFile(path, "utf8");
        const names = new Set<string>();
        const declared =
          /^export\s+(?:async\s+|abstract\s+)*(?:function\*?|class|const|let)\s+([\w$]+)/gm;
        for (const [, name] of source.matchAll(declared)) names.add(name);
        for (const [, list] of source.matchAll(/^export\s+\{([^}]*)\}/gm)) {
          for (const part of list.split(",").map((name) => name.trim())) {
            if (part && !part.startsWith("type ")) names.add(part.split(/\s+as\s+/).pop()!);
          }
        }
        const stubs = [...names].map((name) => `export const ${name}: any = undefined;`);
        return { loader: "ts", contents: stubs.join("\n") };
      });
    },
  };
}

/**
 * Bundles one app; the caller stops esbuild (`esbuild.stop()`) when done. `leftOut` (with
 * "sources" only) prices a part: see leaveOut.
 */
export async function bundleApp(
  source: string,
  from: CairnFrom,
  leftOut?: RegExp,
): Promise<AppBundle> {
  const result = await esbuild.build({
    stdin: { contents: source, resolveDir: ".", loader: "js", sourcefile: "app.js" },
    bundle: true,
    minify: true,
    splitting: true,
    format: "esm",
    platform: "browser",
    target: "es2022",
    outdir: "out",
    metafile: true,
    write: false,
    logLevel: "silent",
    plugins: from === "sources"
      ? [
        ...(leftOut ? [leaveOut(leftOut)] : []),
        CAIRNDB_FROM_SOURCES,
        ...BROWSER_SOURCES_BUILD.plugins!,
      ]
      : [],
  });
  const outputs = result.metafile.outputs;
  const entry = Object.keys(outputs).find((path) => outputs[path].entryPoint !== undefined)!;
  // A file's static imports load with it; its dynamic imports when that code first runs.
  const reached = (kinds: string[]): Set<string> => {
    const seen = new Set<string>();
    for (const pending = [entry]; pending.length > 0;) {
      const path = pending.pop()!;
      if (seen.has(path)) continue;
      seen.add(path);
      for (const imported of outputs[path].imports) {
        if (kinds.includes(imported.kind)) pending.push(imported.path);
      }
    }
    return seen;
  };
  const atStart = reached(["import-statement"]);
  const ever = reached(["import-statement", "dynamic-import"]);
  const files = (paths: string[]): BundleFiles => {
    const chosen = result.outputFiles.filter((file) =>
      paths.some((path) => file.path.endsWith(path))
    );
    return {
      minified: chosen.reduce((sum, file) => sum + file.contents.length, 0),
      gzipped: chosen.reduce((sum, file) => sum + gzipSync(file.contents).length, 0),
      code: chosen.map((file) => file.text).join("\n"),
      inputs: paths.flatMap((path) => Object.keys(outputs[path].inputs)),
    };
  };
  return {
    start: files([...atStart]),
    lazy: files([...ever].filter((path) => !atStart.has(path))),
  };
}

/** One app's sizes in bytes, as the bench envelope records them. */
export interface BundleSize {
  app: string;
  minified: number;
  gzipped: number;
  /** Loaded later where WebCrypto lacks Ed25519, gzipped. */
  lazyGzipped: number;
}

/** The sizes of every app of BUNDLE_APPS, and the esbuild version that bundled them. */
export async function measureBundleSizes(
  from: CairnFrom,
): Promise<{ esbuild: string; apps: BundleSize[] }> {
  const apps: BundleSize[] = [];
  for (const { name, source } of BUNDLE_APPS) {
    const { start, lazy } = await bundleApp(source, from);
    apps.push({
      app: name,
      minified: start.minified,
      gzipped: start.gzipped,
      lazyGzipped: lazy.gzipped,
    });
  }
  return { esbuild: esbuild.version, apps };
}
