import { test } from "node:test";
import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";

// Tests run from the project root in Deno and in Node.
const EXAMPLE = "examples/sync.ts";

for (const doc of ["docs/sync.md", "README.md"]) {
  test(`${doc} shows the sync example exactly as it is tested`, async () => {
    const [text, source] = await Promise.all([readFile(doc, "utf8"), readFile(EXAMPLE, "utf8")]);
    // The file's first line is a comment about the file itself.
    const code = source.split("\n").slice(1).join("\n").trim();
    assert.ok(text.includes(code), `${doc} must contain the code of ${EXAMPLE} verbatim`);
  });
}

test("the sync example runs: bob reads the note alice wrote, through the server", async () => {
  const logged: unknown[][] = [];
  const original = console.log;
  console.log = (...args: unknown[]) => void logged.push(args);
  try {
    await import("../../examples/sync.ts");
  } finally {
    console.log = original;
  }
  assert.deepEqual(logged, [[1]]);
});
