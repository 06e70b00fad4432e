import { test } from "node:test";
import assert from "node:assert/strict";
import { parseFreshReply, REPLY_PREFIX } from "../../bench/fresh/protocol.ts";

test("a fresh process's answer is its last prefixed line, whatever else it printed", () => {
  const stdout = [
    "a warning from the runtime",
    `${REPLY_PREFIX}{"ms":1}`,
    `${REPLY_PREFIX}{"ms":2.5}`,
    "",
  ].join("\n");
  assert.deepEqual(parseFreshReply(stdout), { ms: 2.5 });
  const memory = { afterOpen: { heap: 10, rss: 20 }, afterRead: { heap: 30, rss: 40 } };
  assert.deepEqual(parseFreshReply(`${REPLY_PREFIX}${JSON.stringify(memory)}\n`), memory);
});

test("a fresh process that gave no answer fails with the end of what it printed", () => {
  assert.throws(
    () => parseFreshReply("started\n", "Error: no such file\n    at open"),
    /gave no answer: Error: no such file \|\s+at open \| started/,
  );
  assert.throws(() => parseFreshReply(""), /^Error: the fresh process gave no answer$/);
});
