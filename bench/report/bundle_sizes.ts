/**
 * What Cairn adds to an app's browser bundle, from the envelope's `bundle` (measured by
 * scripts/lib/bundle_size.ts): a console table for the runner and a section of docs/benchmarks.md.
 */
import type { BundleSize } from "../../scripts/lib/bundle_size.ts";
import type { Envelope } from "../lib/envelope.ts";

/** Issue #18's target for what an app that imports Cairn loads, min+gz. */
const TARGET_GZIPPED_BYTES = 30_000;

function kb(bytes: number): string {
  return `${(bytes / 1000).toFixed(1)} KB`;
}

function verdict(size: BundleSize): string {
  const ratio = size.gzipped / TARGET_GZIPPED_BYTES;
  return ratio <= 1 ? "met" : `missed: ${ratio.toFixed(2)}× the target`;
}

/** The runner's console lines. */
export function renderBundleSizes(apps: readonly BundleSize[]): string {
  const lines = apps.map((size) =>
    `  ${size.app.padEnd(52)} ${kb(size.minified).padStart(9)} min  ` +
    `${kb(size.gzipped).padStart(8)} min+gz at start (≤ 30 KB: ${verdict(size)})` +
    (size.lazyGzipped > 0 ? `; +${kb(size.lazyGzipped)} without WebCrypto Ed25519` : "")
  );
  return ["── browser bundle of an app importing cairndb (esbuild, split, minified)", ...lines]
    .join("\n");
}

/** The markdown section; empty when the run had no browser (the sizes are measured with it). */
export function bundleSection(envelope: Envelope): string[] {
  if (!envelope.bundle) return [];
  const out = [
    "## Bundle size",
    "",
    "What an app's browser bundle carries of Cairn (issue #18; target ≤ 30 KB min+gz): small apps " +
    "importing `cairndb` bundled by esbuild " + envelope.bundle.esbuild + " as an app's bundler " +
    "does (minified, split at dynamic imports), each file gzipped on its own; _at start_ counts " +
    "the entry and its static imports, the last column what a page loads later where WebCrypto " +
    "lacks Ed25519 (@noble/ed25519). docs/browser.md says what the bytes are.",
    "",
    "| App | Minified at start | Min+gz at start | Target ≤ 30 KB | Later, without WebCrypto Ed25519 |",
    "| --- | --- | --- | --- | --- |",
  ];
  for (const size of envelope.bundle.apps) {
    out.push(
      `| ${size.app} | ${kb(size.minified)} | ${kb(size.gzipped)} | ${verdict(size)} | ` +
        `${size.lazyGzipped > 0 ? `+${kb(size.lazyGzipped)}` : "—"} |`,
    );
  }
  out.push("");
  return out;
}
