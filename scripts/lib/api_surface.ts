/**
 * The package's public declarations: API Extractor rolls the .d.ts files tsc emitted into one
 * file per entry point, without `@internal` members, and compares the surface with the API report
 * kept in docs/api-report/. A surface that differs from its report fails the build, so every
 * change of the public API is deliberate: review the diff, then run `deno task api:update`.
 */
import { dirname } from "node:path";
import { run } from "./process.ts";

/** One config per entry point of the package (package.json "exports"). */
const CONFIGS = [
  "scripts/api/cairndb.json",
  "scripts/api/cairndb-server.json",
  // After cairndb.json: the React entry imports "cairndb", whose types it must refer to, not copy.
  "scripts/api/cairndb-react.json",
];

/**
 * Where cairndb-react.json finds "cairndb": a copy of the rolled-up dist/mod.d.ts under a
 * node_modules path, because API Extractor leaves an import as an import only when it resolves
 * into node_modules (the package's own dist/ would be inlined, declaring a second Cairn class).
 */
const CAIRNDB_AS_DEPENDENCY = "build/api-deps/node_modules/cairndb/mod.d.ts";

const NODE = "./node_modules/.bin/node";
const EXTRACTOR = "./node_modules/@microsoft/api-extractor/bin/api-extractor";

export async function rollUpDeclarations(update: boolean): Promise<void> {
  await Deno.mkdir("docs/api-report", { recursive: true });
  for (const config of CONFIGS) {
    if (config.endsWith("cairndb-react.json")) {
      await Deno.mkdir(dirname(CAIRNDB_AS_DEPENDENCY), { recursive: true });
      await Deno.copyFile("dist/mod.d.ts", CAIRNDB_AS_DEPENDENCY);
    }
    try {
      // --local writes a changed report instead of failing on it.
      await run(NODE, [EXTRACTOR, "run", "-c", config, ...(update ? ["--local"] : [])]);
    } catch (err) {
      throw new Error(
        `the public API differs from its report in docs/api-report/ (${config}): if the change ` +
          `is meant, review it and run \`deno task api:update\``,
        { cause: err },
      );
    }
  }
}
