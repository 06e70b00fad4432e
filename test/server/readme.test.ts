import { test } from "node:test";
import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";

// Tests run from the project root in Deno and in Node.
const EXAMPLE = "examples/quickstart.ts";

function exampleCode(source: string): string {
  // The file's first line is a comment about the file itself, not part of the README.
  return source.split("\n").slice(1).join("\n").trim();
}

test("the README shows the quickstart example exactly as it is tested", async () => {
  const [readme, source] = await Promise.all([
    readFile("README.md", "utf8"),
    readFile(EXAMPLE, "utf8"),
  ]);
  assert.ok(
    readme.includes(exampleCode(source)),
    `README.md must contain the code of ${EXAMPLE} verbatim (update one to match the other)`,
  );
});

test("the quickstart example runs", async () => {
  const logged: unknown[][] = [];
  const original = console.log;
  console.log = (...args: unknown[]) => void logged.push(args);
  try {
    await import("../../examples/quickstart.ts");
  } finally {
    console.log = original;
  }
  assert.ok(logged.length > 0, "the example prints its results");
  assert.deepEqual(logged.at(-1), [true]);
});
