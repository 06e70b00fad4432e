// The Vite build of test/web/vite-reload/ (scripts/lib/bundles.ts runs it with Node). "cairndb" is
// the built package, as an app that installed it would import it.
import { fileURLToPath } from "node:url";

const project = fileURLToPath(new URL("../../..", import.meta.url));

export default {
  root: fileURLToPath(new URL(".", import.meta.url)),
  base: "./",
  logLevel: "warn",
  resolve: { alias: { cairndb: `${project}dist/mod.js` } },
  build: { outDir: `${project}build/vite-app`, emptyOutDir: true, target: "es2022" },
};
