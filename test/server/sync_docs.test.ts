import { test } from "node:test";
import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";

// Tests run from the project root in Deno and in Node.
const EXAMPLE = "examples/sync_server.ts";

function exampleCode(source: string): string {
  // The file's first line is a comment about the file itself, not part of the docs.
  return source.split("\n").slice(1).join("\n").trim();
}

test("docs/sync.md shows the sync server example exactly as it is tested", async () => {
  const [docs, source] = await Promise.all([
    readFile("docs/sync.md", "utf8"),
    readFile(EXAMPLE, "utf8"),
  ]);
  assert.ok(
    docs.includes(exampleCode(source)),
    `docs/sync.md must contain the code of ${EXAMPLE} verbatim (update one to match the other)`,
  );
});

test("the sync server example runs", async () => {
  const logged: unknown[][] = [];
  const original = console.log;
  console.log = (...args: unknown[]) => void logged.push(args);
  try {
    await import("../../examples/sync_server.ts");
  } finally {
    console.log = original;
  }
  assert.match(String(logged[0]?.[0]), /^ws:\/\/127\.0\.0\.1:\d+$/);
  assert.deepEqual(logged.at(-1), ["read"]);
});
