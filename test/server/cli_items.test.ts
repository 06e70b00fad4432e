/**
 * `cairndb export` and `cairndb import` run as child processes on Deno and on Node: an export
 * imported into a fresh database gives equal items, written as that database's own session;
 * importing it again writes nothing; a file that is not a valid export is refused with exit
 * code 3 and imports nothing. Text fields go out as their text and come back as text an
 * application reads, edits and merges.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { rm } from "node:fs/promises";
import { join } from "node:path";
import { Cairn, defineSchema } from "cairndb";
import { CLI_RUNTIMES, directoryContents, runCli } from "../harness/cli.ts";
import { withTempDirectory } from "../harness/temp_directory.ts";

const Contact = defineSchema({
  ns: "contact",
  version: 1,
  fields: {
    name: { type: "string", required: true },
    age: { type: "number" },
    tags: { type: "set" },
    address: { type: "map" },
    born: { type: "date" },
  },
});

const Task = defineSchema({
  ns: "task",
  version: 1,
  fields: { title: { type: "string", required: true }, notes: { type: "text" } },
});

/** Each task's title and notes, read with the schema. */
async function tasksOf(path: string): Promise<[string, string, string | undefined][]> {
  const db = await Cairn.open({ path, schemas: [Task] });
  const tasks = await db.open("/tasks");
  const read = [...tasks.keys()].sort().map((key): [string, string, string | undefined] => {
    const task = tasks.get(key, Task)!;
    return [key, task.get("title"), task.get("notes")];
  });
  await db.close();
  return read;
}

async function contactsOf(path: string, repository: string): Promise<unknown[]> {
  const db = await Cairn.open({ path });
  const repo = await db.open(repository);
  const items = [...repo.keys()].sort().map((key) => {
    const item = repo.get(key, Contact)!;
    return [key, ...["name", "age", "tags", "address", "born"].map((f) => item.get(f as "name"))];
  });
  await db.close();
  return items;
}

test("cairndb export → import into a fresh database gives equal items, signed by its own session; again, nothing is written", async () => {
  await withTempDirectory("cli-items", async (dir) => {
    const source = join(dir, "source");
    const db = await Cairn.open({ path: source });
    const people = await db.open("/people");
    for (let i = 0; i < 30; i++) {
      people.create(Contact, {
        name: `person ${i}`,
        age: i % 4 === 0 ? undefined : 20 + i,
        tags: new Set(i % 2 ? ["a", "b"] : []),
        address: new Map<string, string | number>([["city", "Lyon"], ["number", i]]),
        born: new Date(Date.UTC(1990, 0, i + 1)),
      }, { key: `p${i}` });
    }
    people.get("p1", Contact)!.set("name", "renamed");
    people.get("p2", Contact)!.delete();
    (await db.open("/other")).create(Contact, { name: "elsewhere" }, { key: "o" });
    await db.close();
    const expected = await contactsOf(source, "/people");
    assert.equal(expected.length, 29);

    for (const runtime of CLI_RUNTIMES) {
      const exported = await runCli(runtime, ["export", source, "--repository", "/people"]);
      assert.equal(exported.code, 0, exported.stderr);
      const file = JSON.parse(exported.stdout);
      assert.deepEqual(Object.keys(file.repositories), ["/people"]);
      const first = file.repositories["/people"][0];
      assert.deepEqual([first.key, first.schema, first.value.name], [
        "p0",
        "contact@1",
        "person 0",
      ]);

      const target = join(dir, `target-${runtime}`);
      const imported = await runCli(runtime, ["import", target], exported.stdout);
      assert.equal(imported.code, 0, imported.stderr);
      assert.equal(imported.stdout, "/people: 29 of 29 items written\n");
      assert.deepEqual(await contactsOf(target, "/people"), expected);

      const verified = JSON.parse((await runCli(runtime, ["inspect", target, "--json"])).stdout);
      const targetDb = await Cairn.open({ path: target });
      const repo = await targetDb.open("/people");
      assert.ok(repo.leaves("p5").every((id) => id.startsWith(`${targetDb.session.id}.`)));
      await targetDb.close();
      assert.equal(verified.repositories[0].sessions, 1, "written by the target's session only");

      const again = await runCli(runtime, ["import", target], exported.stdout);
      assert.equal(again.stdout, "/people: 0 of 29 items written\n");
    }
  });
});

test("cairndb import: a file that is not a valid export is refused with exit code 3 and imports nothing", async () => {
  await withTempDirectory("cli-junk", async (dir) => {
    const db = await Cairn.open({ path: dir });
    (await db.open("/people")).create(Contact, { name: "kept" }, { key: "k" });
    await db.close();
    const before = await directoryContents(dir);
    const good = { key: "n", schema: "contact@1", value: { name: "new" } };
    const file = (repositories: unknown, version: unknown = 1) =>
      JSON.stringify({ cairn: "items", version, repositories });
    const junk: [string, RegExp][] = [
      ["", /E_CORRUPT_ENCODING: not an item file/],
      ["not json", /E_CORRUPT_ENCODING: not an item file/],
      ["[1, 2]", /E_CORRUPT_ENCODING/],
      [JSON.stringify({ cairn: "database", version: 1 }), /E_CORRUPT_ENCODING/],
      [file({}, 2), /E_UNSUPPORTED_VERSION/],
      [file([]), /E_CORRUPT_ENCODING: repositories/],
      [file({ "no-slash": [good] }), /E_CORRUPT_ENCODING: repositories: .*E_BAD_PATH/],
      [file({ "/people": {} }), /expected an array/],
      // A valid item first: nothing of the file is imported all the same.
      [file({ "/people": [good, { ...good, key: "" }] }), /\[1\]\.key/],
      [file({ "/people": [good, { ...good, schema: "contact" }] }), /\[1\]\.schema/],
      // Written, it sealed a block every reader but the writer refused (verify, export, convert).
      [
        file({ "/people": [good, { ...good, key: "s", schema: "contact\ud800@1" }] }),
        /\[1\]\.schema: a string with a lone surrogate/,
      ],
      [file({ "/people": [good, { ...good, value: [1] }] }), /\[1\]\.value/],
      [file({ "/people": [good, { ...good, value: "x" }] }), /\[1\]\.value/],
      // A list of lists is the form of text edits: read again, the block holding it is refused.
      [
        file({ "/people": [good, { ...good, key: "g", value: { grid: [[1, 2], [3, 4]] } }] }),
        /\[1\]\.value\.grid\[0\]: a field's list holds strings/,
      ],
      [file({ "/people": [{ ...good, value: { tags: ["a", 1] } }] }), /\[0\]\.value\.tags\[1\]/],
      [file({ "/people": [good, good] }), /given twice/],
      [
        file({ "/people": [good], "/more": [{ ...good, value: { s: "\ud800" } }] }),
        /lone surrogate/,
      ],
      [file({ "/people": [{ ...good, extra: 1, value: { deep: nested(80) } }] }), /nested deeper/],
      // A name given twice, which JSON.parse reads as the last alone: two exports joined by hand
      // imported the second list and dropped the first, exit 0.
      [
        `{"cairn":"items","version":1,"repositories":{"/people":[${JSON.stringify(good)}],` +
        `"/more":[],"/people":[${JSON.stringify({ ...good, key: "m" })}]}}`,
        /"\/people" is given twice/,
      ],
      [
        `{"cairn":"items","version":1,"repositories":{"/people":[` +
        `{"key":"n","schema":"contact@1","value":{"name":"a","n\u0061me":"b"}}]}}`,
        /"name" is given twice/,
      ],
    ];
    for (const runtime of CLI_RUNTIMES) {
      for (const [input, error] of junk) {
        const run = await runCli(runtime, ["import", dir], input);
        assert.equal(run.code, 3, `${runtime}: ${input}`);
        assert.match(run.stderr, error, input);
        assert.equal(run.stdout, "");
      }
    }
    assert.deepEqual(await directoryContents(dir), before, "nothing imported, nothing written");
    const fresh = join(dir, "fresh");
    const run = await runCli("deno", ["import", fresh], "junk");
    assert.equal(run.code, 3);
    assert.deepEqual(Object.keys(await directoryContents(dir)).includes("fresh"), false);
  });
});

function nested(depth: number): unknown {
  return depth === 0 ? 1 : [nested(depth - 1)];
}

test("cairndb export writes a text field as its current text; imported, it reads, edits and exports again the same", async () => {
  await withTempDirectory("cli-text", async (dir) => {
    const source = join(dir, "source");
    const db = await Cairn.open({ path: source, schemas: [Task] });
    const tasks = await db.open("/tasks");
    tasks.create(Task, { title: "plain" }, { key: "a" });
    const note = tasks.create(Task, { title: "draft", notes: "hello world" }, { key: "b" });
    await db.flush();
    note.insertText("notes", 5, ",");
    note.deleteText("notes", 7, 5);
    await db.close();
    const expected = await tasksOf(source);
    assert.deepEqual(expected, [["a", "plain", undefined], ["b", "draft", "hello, "]]);

    for (const runtime of CLI_RUNTIMES) {
      const exported = await runCli(runtime, ["export", source]);
      assert.equal(exported.code, 0, exported.stderr);
      assert.deepEqual(JSON.parse(exported.stdout).repositories["/tasks"][1], {
        key: "b",
        schema: "task@1",
        value: { notes: "hello, ", title: "draft" },
      });
      const again = await runCli(runtime, ["import", source], exported.stdout);
      assert.equal(again.stdout, "/tasks: 0 of 2 items written\n", "its own texts are equal");

      const target = join(dir, `target-${runtime}`);
      const imported = await runCli(runtime, ["import", target], exported.stdout);
      assert.equal(imported.code, 0, imported.stderr);
      assert.deepEqual(await tasksOf(target), expected);
      assert.equal((await runCli(runtime, ["export", target])).stdout, exported.stdout);
      // Edited by an application, then read again from the log alone: its text holds.
      const app = await Cairn.open({ path: target, schemas: [Task] });
      (await app.open("/tasks")).get("b", Task)!.insertText("notes", 0, ">");
      await app.close();
      await rm(join(target, "tasks.ckpt"));
      assert.deepEqual((await tasksOf(target))[1], ["b", "draft", ">hello, "]);
      const verified = await runCli(runtime, ["verify", target]);
      assert.equal(verified.code, 0, verified.stdout);
    }
  });
});

test("cairndb import over text an application edited: the imported text is what it reads, from the log and from a checkpoint; a list there imports nothing", async () => {
  await withTempDirectory("cli-text-over", async (dir) => {
    const db = await Cairn.open({ path: dir, schemas: [Task] });
    const tasks = await db.open("/tasks");
    tasks.create(Task, { title: "draft", notes: "hello world" }, { key: "b" });
    await db.close();
    const backup = await runCli("deno", ["export", dir]);
    const edit = async (change: (notes: string) => string) => {
      const app = await Cairn.open({ path: dir, schemas: [Task] });
      const task = (await app.open("/tasks")).get("b", Task)!;
      task.set("notes", change(task.get("notes")!));
      await app.close();
    };
    for (const runtime of CLI_RUNTIMES) {
      await edit((notes) => `${notes}, and more`);
      const restored = await runCli(runtime, ["import", dir], backup.stdout);
      assert.equal(restored.stdout, "/tasks: 1 of 1 items written\n", restored.stderr);
      // The import's close wrote a checkpoint: read from it, then from the log alone.
      assert.deepEqual(await tasksOf(dir), [["b", "draft", "hello world"]]);
      await rm(join(dir, "tasks.ckpt"));
      assert.deepEqual(await tasksOf(dir), [["b", "draft", "hello world"]]);
      await edit((notes) => `>${notes}`);
      assert.deepEqual(await tasksOf(dir), [["b", "draft", ">hello world"]]);
      assert.equal((await runCli(runtime, ["verify", dir])).code, 0);
    }

    const before = await directoryContents(dir);
    const file = (value: unknown, key = "b") =>
      JSON.stringify({
        cairn: "items",
        version: 1,
        repositories: { "/tasks": [{ key, schema: "task@1", value }] },
      });
    for (const runtime of CLI_RUNTIMES) {
      for (
        const input of [
          file({ title: "draft", notes: ["hello"] }),
          file({ title: "draft", notes: 5 }),
          // A new item of the same schema: its notes are text too.
          file({ title: "new", notes: ["hello"] }, "c"),
        ]
      ) {
        const run = await runCli(runtime, ["import", dir], input);
        assert.equal(run.code, 3, input);
        assert.match(run.stderr, /E_WRONG_TYPE: repositories\["\/tasks"\]\[0\]\.value\.notes: /);
      }
    }
    assert.deepEqual(await directoryContents(dir), before, "nothing imported, nothing written");
  });
});

test("cairndb import over fields created empty: a string over a text, a list over a set; an application reads both, from the log and from a checkpoint", async () => {
  await withTempDirectory("cli-empty-fields", async (dir) => {
    const file = JSON.stringify({
      cairn: "items",
      version: 1,
      repositories: {
        "/tasks": [{ key: "t", schema: "task@1", value: { title: "draft", notes: "hello" } }],
        "/people": [{ key: "p", schema: "contact@1", value: { name: "ann", tags: ["a", "b"] } }],
      },
    });
    for (const runtime of CLI_RUNTIMES) {
      const path = join(dir, runtime);
      const db = await Cairn.open({ path, schemas: [Task, Contact] });
      (await db.open("/tasks")).create(Task, { title: "draft", notes: "" }, { key: "t" });
      (await db.open("/people")).create(Contact, { name: "ann", tags: new Set() }, { key: "p" });
      await db.close();
      const read = async () => {
        const app = await Cairn.open({ path, schemas: [Task, Contact] });
        const notes = (await app.open("/tasks")).get("t", Task)!.get("notes");
        const tags = (await app.open("/people")).get("p", Contact)!.get("tags");
        await app.close();
        return [notes, tags];
      };
      const run = await runCli(runtime, ["import", path], file);
      assert.equal(run.code, 0, run.stderr);
      assert.equal(run.stdout, "/tasks: 1 of 1 items written\n/people: 1 of 1 items written\n");
      assert.deepEqual(await read(), ["hello", new Set(["a", "b"])]);
      await rm(join(path, "tasks.ckpt"));
      await rm(join(path, "people.ckpt"));
      assert.deepEqual(await read(), ["hello", new Set(["a", "b"])]);
      const again = await runCli(runtime, ["import", path], file);
      assert.equal(again.stdout, "/tasks: 0 of 1 items written\n/people: 0 of 1 items written\n");
    }
  });
});

test("cairndb export → import of a text created empty, into a fresh database: an application reads it from the checkpoint the import wrote as from the log", async () => {
  await withTempDirectory("cli-empty-text", async (dir) => {
    const source = join(dir, "source");
    const app = await Cairn.open({ path: source, schemas: [Task] });
    (await app.open("/tasks")).create(Task, { title: "draft", notes: "" }, { key: "t" });
    await app.close();
    for (const runtime of CLI_RUNTIMES) {
      const exported = await runCli(runtime, ["export", source]);
      assert.equal(exported.code, 0, exported.stderr);
      const target = join(dir, runtime);
      const imported = await runCli(runtime, ["import", target], exported.stdout);
      assert.equal(imported.code, 0, imported.stderr);
      // Written without the schema, the empty text is `[]` in the checkpoint, as a set's values.
      assert.deepEqual(await tasksOf(target), [["t", "draft", ""]], `${runtime}: checkpoint`);
      await rm(join(target, "tasks.ckpt"));
      assert.deepEqual(await tasksOf(target), [["t", "draft", ""]], `${runtime}: log`);
      // Imported back into the database it came from (whose checkpoint reads the text as ""):
      // the item is as the file says, so nothing is written.
      const again = await runCli(runtime, ["import", source], exported.stdout);
      assert.equal(again.stdout, "/tasks: 0 of 1 items written\n", `${runtime}: ${again.stderr}`);
    }
  });
});
