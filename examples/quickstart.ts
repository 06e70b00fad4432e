// The README's usage example, kept compiling (deno task check) and running (test/server/readme.test.ts).
import { commitFromJsonLine, commitToJsonLine, decodeCommit, encodeCommit } from "cairndb";

const commit = {
  session: "alice",
  seq: 1,
  key: "todo-1",
  hlc: Date.now() * 1024,
  parents: [],
  schema: "task@1",
  body: { kind: "value", value: { title: "write tests", done: false } },
} as const;

const bytes = encodeCommit(commit); // MessagePack, as in the binary log
const line = commitToJsonLine(commit); // one line of a JSONL log
console.log(bytes.length, "bytes;", line);
console.log(decodeCommit(bytes).key === commitFromJsonLine(line).key); // true
