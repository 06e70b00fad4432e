/**
 * esbuild builds: the npm package (dist/), the Node test files and the browser test bundle.
 * The package is built from src/mod.ts; tests that import "cairndb" get the built package on
 * Node (proving it works as users import it) and the sources in the browser bundle.
 */
import * as esbuild from "esbuild";
import { relative, resolve } from "node:path";
import { run } from "./process.ts";

/** Options every Node bundle shares: ESM for Node 22, dependencies left as imports. */
export const NODE_BUNDLE: esbuild.BuildOptions = {
  bundle: true,
  format: "esm",
  platform: "node",
  target: "node22",
  packages: "external",
  sourcemap: "inline",
  logLevel: "warning",
};

/** Options every browser bundle shares: one ES module per entry. */
export const BROWSER_BUNDLE: esbuild.BuildOptions = {
  bundle: true,
  format: "esm",
  platform: "browser",
  target: "es2022",
  logLevel: "warning",
};

/**
 * Browser bundles take Automerge (a text contender of the bench) from
 * bench/contenders/automerge_browser.ts, which says why; subpaths such as "/slim" resolve as usual.
 */
export const AUTOMERGE_IN_BROWSER: esbuild.Plugin = {
  name: "automerge-in-browser",
  setup(build) {
    build.onResolve(
      { filter: /^@automerge\/automerge$/ },
      () => ({ path: resolve("bench/contenders/automerge_browser.ts") }),
    );
  },
};

/**
 * What the browser test bundle takes for Node's test modules: a stand-in for node:test, and the
 * npm package "assert" (Node's assert module, ported) for node:assert.
 */
const BROWSER_SHIMS: Record<string, string> = {
  "node:test": "./test/harness/browser/node_test.ts",
  "node:assert/strict": "./test/harness/browser/assert_strict.ts",
  "node:assert": "assert",
};

/**
 * The "assert" package reads two things of Node's `process` that a page lacks: `util` reads
 * `process.env.NODE_DEBUG` on import, and AssertionError reads `process.stderr` to size and
 * colour its diff (which would turn a failed assertion into "process is not defined"). Both are
 * replaced with undefined, as on a Node process without a terminal. A global `process` object
 * would do instead, but the library and the tests look for one to tell Node from a page.
 */
const ASSERT_IN_BROWSER_DEFINES: Record<string, string> = {
  "process.env.NODE_DEBUG": "undefined",
  "process.stderr": "undefined",
};

export const OPFS_WORKER = "src/storage/backends/opfs_worker.ts";

/**
 * Replaces src/storage/backends/opfs_worker_url.ts (which says why) with a module carrying the
 * OPFS worker, bundled and minified, as a string it serves from a Blob URL made on first use.
 * Inlined it adds 4.6 KB (1.9 KB gzipped) to an app that opens OPFS storage, and every bundler
 * carries it along; a separate file would cost nothing inline but esbuild cannot find it.
 */
export const INLINE_OPFS_WORKER: esbuild.Plugin = {
  name: "inline-opfs-worker",
  setup(build) {
    build.onLoad({ filter: /[\\/]opfs_worker_url\.ts$/ }, async () => {
      const worker = await esbuild.build({
        ...BROWSER_BUNDLE,
        entryPoints: [OPFS_WORKER],
        minify: true,
        write: false,
      });
      const code = worker.outputFiles[0].text;
      return {
        loader: "js",
        contents: `let url;\nexport function opfsWorkerUrl() {\n` +
          `  url ??= URL.createObjectURL(new Blob([${JSON.stringify(code)}], ` +
          `{ type: "text/javascript" }));\n  return url;\n}\n`,
      };
    });
  },
};

/** Modules a browser never runs, and what the package's browser builds take in their place. */
const BROWSER_HALVES: readonly [RegExp, string][] = [
  [/[\\/]src[\\/]storage[\\/]backends[\\/]select\.ts$/, "select_browser.ts"],
  [/[\\/]src[\\/]runtime[\\/]node_crypto\.ts$/, "node_crypto_absent.ts"],
];

/** The module a browser build takes for the module at `path`: its browser half, or itself. */
function browserHalf(path: string): string {
  const half = BROWSER_HALVES.find(([pattern]) => pattern.test(path));
  return half ? resolve(path, "..", half[1]) : path;
}

/**
 * Resolves each module named on BROWSER_HALVES' left to its browser half, a module beside it:
 * the file backend and node:crypto's suite stay out of what a page loads.
 */
export const BROWSER_HALVES_PLUGIN: esbuild.Plugin = {
  name: "browser-halves",
  setup(build) {
    build.onResolve({ filter: /(select|node_crypto)\.ts$/ }, (args) => {
      const path = resolve(args.resolveDir, args.path);
      const half = browserHalf(path);
      return half === path ? undefined : { path: half };
    });
  },
};

/** What every build of src/mod.ts in the package shares. */
const PACKAGE_COMMON: esbuild.BuildOptions = {
  entryPoints: { mod: "src/mod.ts" },
  bundle: true,
  format: "esm",
  target: "es2022",
  sourcemap: true,
  logLevel: "warning",
  plugins: [INLINE_OPFS_WORKER],
};

const BROWSER_ONLY = [INLINE_OPFS_WORKER, BROWSER_HALVES_PLUGIN];

/** src/mod.ts as a browser reaches it: with the browser halves and the OPFS worker inline. */
export const BROWSER_SOURCES_BUILD: esbuild.BuildOptions = {
  ...PACKAGE_COMMON,
  platform: "browser",
  packages: "external",
  plugins: BROWSER_ONLY,
};

/**
 * Leaves each import of a module as an import of its built file (`./x.ts` → `./x.js`, a Node
 * twin → its browser half), so that every source module builds into a file of its own.
 */
const EACH_MODULE_APART: esbuild.Plugin = {
  name: "each-module-apart",
  setup(build) {
    build.onResolve({ filter: /.*/ }, (args) => {
      if (args.kind === "entry-point") return undefined;
      if (!args.path.startsWith(".")) return { external: true };
      const built = relative(args.resolveDir, browserHalf(resolve(args.resolveDir, args.path)))
        .replace(/\.ts$/, ".js");
      return { path: built.startsWith("../") ? built : `./${built}`, external: true };
    });
  },
};

/**
 * dist/modules/: what bundlers take for a browser (the "browser" condition of package.json's
 * exports), one ES module per source module, without what a browser never runs. Kept apart, not
 * bundled into one file, so an app's bundler drops every module the app does not reach
 * ("sideEffects": false), as it would from the sources: inside one pre-bundled module it must keep
 * whatever top-level value it cannot prove pure (a `new TextDoc()`, a table built at load).
 */
async function buildBrowserModules(outdir: string): Promise<void> {
  const graph = await esbuild.build({
    ...BROWSER_SOURCES_BUILD,
    sourcemap: false,
    metafile: true,
    write: false,
  });
  const modules = Object.keys(graph.metafile.inputs).filter((path) => path.startsWith("src/"));
  await esbuild.build({
    ...BROWSER_SOURCES_BUILD,
    entryPoints: modules,
    outbase: "src",
    outdir,
    sourcemap: true,
    plugins: [INLINE_OPFS_WORKER, EACH_MODULE_APART],
  });
}

/** dist/mod.js for Node and bundlers (dependencies stay imports), dist/modules/ the same for
 *  bundlers building for a browser (a file per module, without what a browser never runs),
 *  dist/browser/cairn.js, one self-contained, minified ES module a plain `<script type="module">`
 *  page can import; the React bindings (`cairndb/react`) as dist/react.js; the sync server
 *  (`cairndb/server`) as dist/server.js and the `cairndb` command as dist/cli.js, for Deno and
 *  Node only. The builds for browsers carry the OPFS worker inline; its file is shipped too, for
 *  pages whose Content-Security-Policy forbids blob: workers. */
export async function buildPackage(): Promise<void> {
  await Promise.all([
    esbuild.build({ ...PACKAGE_COMMON, outdir: "dist", platform: "neutral", packages: "external" }),
    buildBrowserModules("dist/modules"),
    esbuild.build({
      ...PACKAGE_COMMON,
      entryPoints: { cairn: "src/mod.ts" },
      outdir: "dist/browser",
      platform: "browser",
      minify: true,
      plugins: BROWSER_ONLY,
    }),
    buildOpfsWorker("dist"),
    buildOpfsWorker("dist/browser"),
    // The React bindings import "cairndb" and "react", both left as imports: the app's own.
    esbuild.build({
      ...PACKAGE_COMMON,
      entryPoints: { react: "src/react.ts" },
      outdir: "dist",
      platform: "neutral",
      packages: "external",
    }),
    esbuild.build({
      ...NODE_BUNDLE,
      entryPoints: { server: "src/server.ts" },
      outdir: "dist",
      sourcemap: true,
    }),
    esbuild.build({
      ...NODE_BUNDLE,
      entryPoints: { cli: "src/cli.ts" },
      outdir: "dist",
      sourcemap: true,
      banner: { js: "#!/usr/bin/env node" },
    }),
  ]);
}

/** The OPFS backend's worker as `<outdir>/opfs_worker.js`, minified, for `workerUrl`. */
async function buildOpfsWorker(outdir: string): Promise<void> {
  await esbuild.build({
    ...BROWSER_BUNDLE,
    entryPoints: { opfs_worker: OPFS_WORKER },
    outdir,
    sourcemap: true,
    minify: true,
  });
}

/** Each test file as build/node-tests/<path>.mjs, importing "cairndb" from the built package. */
export async function buildNodeTests(files: string[]): Promise<string[]> {
  const outdir = "build/node-tests";
  await Deno.remove(outdir, { recursive: true }).catch(() => {});
  await esbuild.build({
    ...NODE_BUNDLE,
    entryPoints: files,
    outbase: "test",
    outdir,
    outExtension: { ".js": ".mjs" },
  });
  return files.map((file) => `${outdir}/${relative("test", file).replace(/\.ts$/, ".mjs")}`);
}

/** All browser tests in one bundle, build/browser-tests.js, which test/web/suite/index.html loads. */
export async function buildBrowserTests(files: string[]): Promise<void> {
  // Each test file is preceded by a marker module that names it, so reports say which file a
  // test came from; static imports evaluate in order, marker then file.
  const entry = [
    `import { runRegisteredTests } from "./test/harness/browser/run.ts";`,
    ...files.flatMap((file, i) => [`import "cairn-file-marker:${i}";`, `import "./${file}";`]),
    `runRegisteredTests();`,
  ].join("\n");
  await buildOpfsWorker("build");
  await esbuild.build({
    stdin: { contents: entry, resolveDir: ".", loader: "ts", sourcefile: "browser-tests-entry.ts" },
    ...BROWSER_BUNDLE,
    outfile: "build/browser-tests.js",
    sourcemap: "inline",
    alias: { ...BROWSER_SHIMS, cairndb: "./src/mod.ts", "cairndb/react": "./src/react.ts" },
    // React's development build: it warns about snapshots that are not cached, which tests see.
    define: { "process.env.NODE_ENV": '"development"', ...ASSERT_IN_BROWSER_DEFINES },
    // package.json says "sideEffects": false for users' tree-shaking; test files register tests
    // as a side effect of being imported, so that hint must not apply here.
    ignoreAnnotations: true,
    plugins: [AUTOMERGE_IN_BROWSER, INLINE_OPFS_WORKER, {
      name: "file-markers",
      setup(build) {
        build.onResolve(
          { filter: /^cairn-file-marker:/ },
          (args) => ({ path: args.path, namespace: "marker" }),
        );
        build.onLoad({ filter: /.*/, namespace: "marker" }, (args) => ({
          contents: `import { setCurrentFile } from "./test/harness/browser/node_test.ts";\n` +
            `setCurrentFile(${JSON.stringify(files[Number(args.path.split(":")[1])])});`,
          resolveDir: ".",
          loader: "ts",
        }));
      },
    }],
  });
}

export function stopBundler(): Promise<void> {
  return esbuild.stop();
}

/**
 * The app of test/web/bundled-reload/ built by Vite (test/web/vite-reload/vite.config.mjs) into
 * build/vite-app/, from the built package in dist/, as `vite build` runs in an app: with Node.
 */
export async function buildViteApp(): Promise<void> {
  await run("./node_modules/.bin/node", [
    "node_modules/vite/bin/vite.js",
    "build",
    "--config",
    "test/web/vite-reload/vite.config.mjs",
  ]);
}

/**
 * The apps of test/web/bundled/ and test/web/bundled-reload/, bundled from the package name as an
 * app would do it (and the election page of test/web/tabs-election/, from src/), into build/apps/:
 * a directory of their own, where no worker file lies beside them (build/ has the test bundle's
 * opfs_worker.js, which would hide a worker the app cannot find).
 */
export async function buildBundledApp(): Promise<void> {
  await esbuild.build({
    ...BROWSER_BUNDLE,
    entryPoints: {
      "bundled-app": "test/web/bundled/app.ts",
      "bundled-reload-app": "test/web/bundled-reload/app.ts",
      // Not an app of the package: the election's page, which reaches src/tabs/ directly.
      "tabs-election": "test/web/tabs-election/page.ts",
    },
    outdir: "build/apps",
  });
}
