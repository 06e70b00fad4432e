/**
 * The package's public declarations: API Extractor rolls the .d.ts files tsc emitted into one
 * file per entry point, without `@internal` members, and compares the surface with the API report
 * kept in docs/api-report/. A surface that differs from its report fails the build, so every
 * change of the public API is deliberate: review the diff, then run `deno task api:update`.
 */
import { run } from "./process.ts";

/** One config per entry point of the package (package.json "exports"). */
const CONFIGS = ["scripts/api/cairndb.json", "scripts/api/cairndb-server.json"];

const NODE = "./node_modules/.bin/node";
const EXTRACTOR = "./node_modules/@microsoft/api-extractor/bin/api-extractor";

export async function rollUpDeclarations(update: boolean): Promise<void> {
  await Deno.mkdir("docs/api-report", { recursive: true });
  for (const config of CONFIGS) {
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
