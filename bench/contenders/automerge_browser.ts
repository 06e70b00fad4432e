/**
 * Automerge in a browser bundle: the slim build, with its WebAssembly fetched from the package as
 * shipped (served with the page, as SQLite WASM is) and instantiated before anything uses it.
 * Browser bundles resolve "@automerge/automerge" to this module (scripts/lib/bundles.ts): the
 * package's own browser entry imports its .wasm file as a module, which esbuild cannot bundle.
 */
import { initializeWasm } from "@automerge/automerge/slim";

await initializeWasm("/node_modules/@automerge/automerge/dist/automerge.wasm");

export * from "@automerge/automerge/slim";
