/**
 * `cairndb export` and `cairndb import` run as child processes on Deno and on Node: an export
 * imported into a fresh database gives equal items, written as that database's own session;
 * importing it again writes nothing; a file that is not a valid export is refused with exit
 * code 3 and imports nothing.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
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
      [file({ "/people": [good, { ...good, value: [1] }] }), /\[1\]\.value/],
      [file({ "/people": [good, { ...good, value: "x" }] }), /\[1\]\.value/],
      [file({ "/people": [good, good] }), /given twice/],
      [
        file({ "/people": [good], "/more": [{ ...good, value: { s: "\ud800" } }] }),
        /lone surrogate/,
      ],
      [file({ "/people": [{ ...good, extra: 1, value: { deep: nested(80) } }] }), /nested deeper/],
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
