import { test } from "node:test";
import assert from "node:assert/strict";
import { BundleModules, type CpuProfile, summarizeProfile } from "../../bench/lib/cpu_profile.ts";

const ROOT = "file:///work/cairn";

/**
 * A profile of five nodes: (root) → write (src/repo/a.ts) → sign (src/core/b.ts), write → GC,
 * and (idle) under the root. Samples: sign 3 ms, write 1 ms, GC 2 ms, idle 4 ms.
 */
function profile(): CpuProfile {
  const frame = (functionName: string, url = "", lineNumber = 0) => ({
    functionName,
    url,
    lineNumber,
  });
  return {
    nodes: [
      { id: 1, callFrame: frame("(root)"), children: [2, 5] },
      { id: 2, callFrame: frame("write", `${ROOT}/src/repo/a.ts`, 9), children: [3, 4] },
      { id: 3, callFrame: frame("sign", `${ROOT}/src/core/b.ts`, 19) },
      { id: 4, callFrame: frame("(garbage collector)") },
      { id: 5, callFrame: frame("(idle)") },
    ],
    startTime: 1_000,
    // Each sample lasts until the next one; the last until endTime.
    samples: [3, 2, 4, 5],
    timeDeltas: [0, 3_000, 1_000, 2_000],
    endTime: 1_000 + 10_000,
  };
}

function share(rows: { name: string; ms: number }[], name: string): number | undefined {
  return rows.find((row) => row.name === name)?.ms;
}

test("cpu profile: self time by area and function, time on the stack for Cairn's functions", () => {
  const summary = summarizeProfile(profile());
  assert.equal(summary.totalMs, 10);
  assert.equal(share(summary.areas, "src/core/b.ts"), 3);
  assert.equal(share(summary.areas, "src/repo/a.ts"), 1);
  assert.equal(share(summary.areas, "GC"), 2);
  assert.equal(share(summary.areas, "idle (waiting for I/O or timers)"), 4);
  assert.equal(share(summary.self, "sign src/core/b.ts"), 3);
  // write is on the stack under sign and GC too: 3 + 1 + 2 ms.
  assert.equal(share(summary.onStack, "write src/repo/a.ts"), 6);
  assert.equal(share(summary.onStack, "sign src/core/b.ts"), 3);
  assert.equal(summary.onStack.length, 2, "only Cairn's own functions");
  assert.equal(summary.areas[0].name, "idle (waiting for I/O or timers)", "ranked by time");
  assert.equal(summary.areas[0].share, 0.4);
});

test("cpu profile: frames of a bundle are told apart by its module comments", () => {
  const url = `${ROOT}/build/bench/profile.mjs`;
  const bundle = new BundleModules(
    url,
    ["// src/repo/a.ts", "function write() {}", "", "// src/core/b.ts", "function sign() {}"]
      .join("\n"),
  );
  assert.equal(bundle.pathAt(1), "src/repo/a.ts");
  assert.equal(bundle.pathAt(4), "src/core/b.ts");
  assert.equal(bundle.pathAt(0), "src/repo/a.ts");
  const bundled = profile();
  bundled.nodes[1].callFrame = { functionName: "write", url, lineNumber: 1 };
  bundled.nodes[2].callFrame = { functionName: "sign", url, lineNumber: 4 };
  const summary = summarizeProfile(bundled, 20, bundle);
  assert.equal(share(summary.areas, "src/core/b.ts"), 3);
  assert.equal(share(summary.self, "sign src/core/b.ts"), 3);
  assert.equal(share(summary.onStack, "write src/repo/a.ts"), 6);
});
