/**
 * `cairndb convert` run as a child process on Deno and on Node: binary → JSONL → binary keeps
 * every item and block and the database opens in the new format each time; it refuses with
 * E_LOCKED (exit code 3), changing nothing, while the database is open.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { Cairn, type CairnWarning, defineSchema, isCairnError } from "cairndb";
import { CLI_RUNTIMES, directoryContents, runCli } from "../harness/cli.ts";
import { withTempDirectory } from "../harness/temp_directory.ts";

const Note = defineSchema({
  ns: "note",
  version: 1,
  fields: { title: { type: "string", required: true }, tags: { type: "set" } },
});

/** Every item of every repository, as [repository, key, value]. */
async function itemsOf(db: Cairn, paths: string[]): Promise<unknown[]> {
  const items: unknown[] = [];
  for (const path of paths) {
    const repo = await db.open(path);
    for (const key of [...repo.keys()].sort()) {
      const item = repo.get(key, Note)!;
      items.push([path, key, item.get("title"), [...(item.get("tags") ?? [])]]);
    }
  }
  return items;
}

test("cairndb convert: binary → JSONL (Deno) → binary (Node) keeps every item, and the database opens in each format", async () => {
  await withTempDirectory("cli-convert", async (dir) => {
    const paths = ["/a", "/b/c"];
    let db = await Cairn.open({ path: dir });
    for (const [i, path] of paths.entries()) {
      const repo = await db.open(path);
      for (let n = 0; n < 20; n++) {
        repo.create(Note, { title: `${path} ${n}`, tags: new Set([`t${n % 3}`]) }, {
          key: `k${n}`,
        });
        if (n % 7 === i) await repo.flush();
      }
      repo.get("k3", Note)!.set("title", "changed");
      repo.get("k4", Note)!.delete();
    }
    const expected = await itemsOf(db, paths);
    await db.close();
    const originalLog = await readFile(join(dir, "a.log"));

    for (const [runtime, to] of [["deno", "jsonl"], ["node", "binary"]] as const) {
      assert.ok(CLI_RUNTIMES.includes(runtime));
      const run = await runCli(runtime, ["convert", dir, "--to", to]);
      assert.equal(run.code, 0, run.stderr);
      assert.match(run.stdout, new RegExp(`^cairn.json: format ${to}$`, "m"));
      const settings = JSON.parse(await readFile(join(dir, "cairn.json"), "utf8"));
      assert.equal(settings.format, to);
      const files = Object.keys(await directoryContents(dir));
      const ext = to === "jsonl" ? "jsonl" : "log";
      assert.deepEqual(files, ["a." + ext, "b~c." + ext, "cairn.json", "writer.lock"]);
      const warnings: CairnWarning[] = [];
      db = await Cairn.open({ path: dir, format: to, onWarning: (w) => warnings.push(w) });
      assert.deepEqual(await itemsOf(db, paths), expected);
      assert.deepEqual(warnings, []);
      await db.close();
      const verified = await runCli(runtime, ["verify", dir]);
      assert.equal(verified.code, 0, verified.stdout);
    }
    // Conversion is lossless: the log's records are the original bytes again (closing after the
    // reopen wrote checkpoints, never log records).
    assert.deepEqual(
      new Uint8Array(await readFile(join(dir, "a.log"))),
      new Uint8Array(originalLog),
    );

    const again = await runCli("deno", ["convert", dir, "--to", "binary"]);
    assert.equal(again.code, 0);
    assert.match(again.stdout, /in the binary format already$/m);
  });
});

test("cairndb convert: a run interrupted before cairn.json was written is done again; one interrupted after it has its old logs removed", async () => {
  await withTempDirectory("cli-convert-crash", async (dir) => {
    const db = await Cairn.open({ path: dir });
    for (const path of ["/a", "/b"]) {
      (await db.open(path)).create(Note, { title: path }, { key: "k" });
    }
    const expected = await itemsOf(db, ["/a", "/b"]);
    await db.close();
    const binary = await directoryContents(dir);
    // Before cairn.json: a new log written for /a, a temporary file of /b's cut short.
    await writeFile(join(dir, "a.jsonl"), '{"cairn":"log"');
    await writeFile(join(dir, "b.jsonl.tmp"), "{");
    const first = await runCli("deno", ["convert", dir, "--to", "jsonl"]);
    assert.equal(first.code, 0, first.stderr);
    const jsonl = await directoryContents(dir);
    // After cairn.json: the old logs still there.
    await writeFile(join(dir, "a.log"), binary["a.log"]);
    await writeFile(join(dir, "b.log"), binary["b.log"]);
    const second = await runCli("node", ["convert", dir, "--to", "jsonl"]);
    assert.equal(second.code, 0, second.stderr);
    assert.match(second.stdout, /^removed a\.log, left by a conversion that was interrupted$/m);
    assert.deepEqual(Object.keys(jsonl), ["a.jsonl", "b.jsonl", "cairn.json", "writer.lock"]);
    assert.deepEqual(await directoryContents(dir), jsonl);
    const reopened = await Cairn.open({ path: dir, format: "jsonl" });
    assert.deepEqual(await itemsOf(reopened, ["/a", "/b"]), expected);
    await reopened.close();
  });
});

test("cairndb convert: refused with E_LOCKED while the database is open, changing nothing; a missing --to is a usage error", async () => {
  await withTempDirectory("cli-convert-locked", async (dir) => {
    const db = await Cairn.open({ path: dir });
    (await db.open("/a")).create(Note, { title: "x" });
    await db.flush();
    const before = await directoryContents(dir);
    for (const runtime of CLI_RUNTIMES) {
      const run = await runCli(runtime, ["convert", dir, "--to", "jsonl"]);
      assert.equal(run.code, 3);
      assert.match(run.stderr, /E_LOCKED/);
      const usage = await runCli(runtime, ["convert", dir, "--to", "csv"]);
      assert.equal(usage.code, 2);
    }
    assert.deepEqual(await directoryContents(dir), before);
    await db.close();
    await assert.rejects(
      Cairn.open({ path: dir, format: "jsonl" }),
      (err) => isCairnError(err, "E_BAD_ARGUMENT"),
      "still a binary database",
    );
  });
});

test("cairndb convert: a log that cannot be read stops it before cairn.json changes, naming the file", async () => {
  await withTempDirectory("cli-convert-unreadable", async (dir) => {
    const db = await Cairn.open({ path: dir });
    (await db.open("/a")).create(Note, { title: "kept" }, { key: "k" });
    await db.close();
    await writeFile(join(dir, "z~stray.log"), "not a Cairn log\n");
    for (const runtime of CLI_RUNTIMES) {
      const run = await runCli(runtime, ["convert", dir, "--to", "jsonl"]);
      assert.equal(run.code, 3);
      assert.match(run.stderr, /^cairndb convert: E_NOT_A_LOG: z~stray\.log: not a binary log/);
      const settings = JSON.parse(await readFile(join(dir, "cairn.json"), "utf8"));
      assert.equal(settings.format, "binary");
    }
    const reopened = await Cairn.open({ path: dir });
    assert.deepEqual(await itemsOf(reopened, ["/a"]), [["/a", "k", "kept", []]]);
    await reopened.close();
  });
});
