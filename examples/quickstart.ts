// The README's usage example, kept compiling (deno task check) and running (test/server/readme.test.ts).
import { Cairn, defineSchema } from "cairndb";

const Task = defineSchema({
  ns: "task",
  version: 1,
  fields: {
    title: { type: "string", required: true },
    done: { type: "boolean", default: false },
    tags: { type: "set" },
    notes: { type: "text" }, // concurrent edits merge character by character
  },
});

// Two peers (in one process here); each signs its changes with its own Ed25519 key.
const alice = await Cairn.open();
const bob = await Cairn.open({ trust: [alice.session.publicKey] });
await alice.trust(bob.session.publicKey);
const aliceTodos = await alice.open("/data/todos");
const bobTodos = await bob.open("/data/todos");

const task = aliceTodos.create(Task, { title: "write tests", notes: "hello world" });
task.set("tags", new Set(["cairn"])); // synchronous, visible at once

// Sync: send the blocks the other side lacks.
await bobTodos.importBlocks(await aliceTodos.exportBlocks(bobTodos.versionVector()));

// Concurrent edits on both sides…
bobTodos.get(task.key, Task)!.set("notes", "hello brave world");
task.set("notes", "hello world!");
task.set("done", true);

// …and an exchange both ways: every peer computes the same merged value.
await bobTodos.importBlocks(await aliceTodos.exportBlocks(bobTodos.versionVector()));
await aliceTodos.importBlocks(await bobTodos.exportBlocks(aliceTodos.versionVector()));
console.log(task.get("notes"), task.get("done")); // "hello brave world!" true
console.log(bobTodos.get(task.key, Task)!.get("notes") === task.get("notes")); // true

await alice.close();
await bob.close();
