/**
 * Opening on real files, refused (issue #20): with a typed error that names the file it is
 * about, before anything is written where it can be, and leaving no file behind — repository
 * paths too long for a file name, a database path that is a file, files that are not Cairn's,
 * bad options, and a log whose first write fails. Deno and Node (files).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdir, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { openCairnOn } from "../../src/db/database.ts";
import { MAX_PATH_LENGTH } from "../../src/core/repository_path.ts";
import {
  Cairn,
  CairnError,
  type CairnErrorCode,
  defineSchema,
  isCairnError,
} from "../../src/mod.ts";
import { openFsBackend } from "../../src/storage/backends/fs.ts";
import { binaryLog } from "../../src/storage/binary_log.ts";
import { FailingCalls, faultyBackend } from "../harness/faulty_backend.ts";
import { withTempDirectory } from "../harness/temp_directory.ts";
import { REQUIRED_TITLE } from "../harness/schemas.ts";

const Doc = defineSchema(REQUIRED_TITLE);

function hasCode(code: CairnErrorCode, message?: RegExp): (err: unknown) => boolean {
  return (err) => {
    assert.ok(isCairnError(err, code), `expected ${code}, got ${String(err)}`);
    if (message) assert.match(err.message, message);
    return true;
  };
}

/** The directory's files, but the lock holder's pid (there while a database is open). */
const files = async (path: string) =>
  (await readdir(path)).filter((name) => name !== "writer.pid").sort();

test("the longest repository path is stored, reopened and indexed; a longer one is E_BAD_PATH before any file is made", async () => {
  await withTempDirectory("open-failures", async (root) => {
    const path = join(root, "db");
    const db = await Cairn.open({ path, schemas: [Doc] });
    const longest = `/${"a".repeat(MAX_PATH_LENGTH - 8)}/${"b".repeat(6)}`;
    assert.equal(longest.length, MAX_PATH_LENGTH);
    const repo = await db.open(longest);
    repo.create(Doc, { title: "kept" }, { key: "k" });
    repo.createIndex("title"); // the settings file: the longest name a repository has
    await db.close(longest); // a checkpoint too
    const before = await files(path);

    for (const length of [MAX_PATH_LENGTH + 1, 245, 246, 252, 256, 300]) {
      const tooLong = `/${"c".repeat(length - 1)}`;
      await assert.rejects(db.open(tooLong), hasCode("E_BAD_PATH", /at most 238/), `${length}`);
    }
    assert.deepEqual(await files(path), before, "no file was made for a refused path");

    const again = await db.open(longest);
    assert.equal(again.get("k", Doc)?.get("title"), "kept");
    assert.deepEqual(again.stats(), { damaged: [], tornTailBytes: 0, unloadable: [] });
    await db.close();
  });
});

test("a database path that is a file, or passes through one, is E_BAD_ARGUMENT and leaves the file as it was", async () => {
  await withTempDirectory("open-failures", async (root) => {
    const file = join(root, "notes.txt");
    await writeFile(file, "my notes");
    for (const path of [file, join(file, "db")]) {
      await assert.rejects(
        Cairn.open({ path }),
        hasCode("E_BAD_ARGUMENT", /notes\.txt.* is a file/),
        path,
      );
    }
    assert.equal(await readFile(file, "utf8"), "my notes");
    assert.deepEqual(await files(root), ["notes.txt"]);
  });
});

test("options refused by Cairn.open leave no directory behind", async () => {
  await withTempDirectory("open-failures", async (root) => {
    const path = join(root, "db");
    const refused: [string, Record<string, unknown>, CairnErrorCode][] = [
      ["a short secret key", { secretKey: new Uint8Array(3) }, "E_BAD_KEY"],
      ["a bad trusted key", { trust: ["not a key"] }, "E_BAD_KEY"],
      ["not a schema", { schemas: [{ id: "doc@1" }] }, "E_BAD_SCHEMA"],
      ["two schemas under one id", {
        schemas: [Doc, defineSchema({ ...REQUIRED_TITLE, fields: {} })],
      }, "E_BAD_SCHEMA"],
      ["a misspelt option", { schema: [Doc] }, "E_BAD_ARGUMENT"],
      ["an onWarning that is not a function", { onWarning: "log" }, "E_BAD_ARGUMENT"],
    ];
    for (const [what, options, code] of refused) {
      await assert.rejects(Cairn.open({ path, ...options }), hasCode(code), what);
      assert.deepEqual(await files(root), [], what);
    }
  });
});

test("a repository that fails to open leaves no log behind, and one that exists untouched", async () => {
  await withTempDirectory("open-failures", async (root) => {
    const path = join(root, "db");
    // Its settings file is from a newer Cairn: refused, and the log made meanwhile removed.
    const db = await Cairn.open({ path, schemas: [Doc] });
    await db.close();
    const newer = '{"cairn":"repository","version":99,"indexes":[]}\n';
    await writeFile(join(path, "docs.settings.json"), newer);
    const before = await files(path);
    const again = await Cairn.open({ path, schemas: [Doc] });
    await assert.rejects(again.open("/docs"), hasCode("E_UNSUPPORTED_VERSION"));
    assert.deepEqual(await files(path), before, "no docs.log");
    await again.close();

    // The first write of a new log (its header) fails: the part written is removed with it.
    const plan = new FailingCalls();
    plan.failing.add("append");
    const faulty = await openCairnOn(
      { path, schemas: [Doc] },
      async (directory) => faultyBackend(await openFsBackend(directory), plan),
    );
    await assert.rejects(faulty.open("/other"), hasCode("E_IO"));
    assert.deepEqual(await files(path), before, "no other.log");
    plan.clear();
    const other = await faulty.open("/other");
    other.create(Doc, { title: "now it opens" });
    await faulty.close();
  });
});

test("a file that is not Cairn's is E_NOT_A_LOG naming it in full, and is left untouched", async () => {
  await withTempDirectory("open-failures", async (root) => {
    const path = join(root, "db");
    await mkdir(path);
    const notALog = "these are my notes, not a log\n";
    await writeFile(join(path, "docs.log"), notALog);
    const db = await Cairn.open({ path, schemas: [Doc] });
    const logFile = join(path, "docs.log").replaceAll("\\", "/");
    await assert.rejects(db.open("/docs"), (err) => {
      hasCode("E_NOT_A_LOG")(err);
      assert.ok((err as Error).message.includes(logFile), (err as Error).message);
      return true;
    });
    await db.close();
    assert.equal(await readFile(join(path, "docs.log"), "utf8"), notALog);

    await writeFile(join(path, "cairn.json"), "not json");
    await assert.rejects(Cairn.open({ path }), (err) => {
      hasCode("E_NOT_A_LOG")(err);
      assert.ok((err as Error).message.includes(join(path, "cairn.json")), (err as Error).message);
      return true;
    });
    assert.equal(await readFile(join(path, "cairn.json"), "utf8"), "not json");
  });
});

test("a checkpoint that cannot be read is rebuilt from the log", async () => {
  await withTempDirectory("open-failures", async (path) => {
    const warnings: string[] = [];
    const onWarning = ({ message }: { message: string }) => warnings.push(message);
    const db = await Cairn.open({ path, schemas: [Doc], onWarning });
    (await db.open("/docs")).create(Doc, { title: "kept" });
    await db.close(); // writes docs.ckpt
    // Reading it fails (EISDIR, a file too large for memory: what a disk may answer).
    const unreadable = {
      fails: (call: string, name: string) => call === "readFile" && name.endsWith(".ckpt"),
      partial: () => 0,
    };
    const again = await openCairnOn(
      { path, schemas: [Doc], onWarning },
      async (directory) => faultyBackend(await openFsBackend(directory), unreadable),
    );
    const docs = await again.open("/docs");
    assert.deepEqual([...docs.keys()].map((key) => docs.get(key, Doc)!.get("title")), ["kept"]);
    assert.ok(
      warnings.some((message) => /checkpoint was unusable.*could not be read/.test(message)),
      warnings.join("\n"),
    );
    await again.close();
  });
});

test("an open refused because the directory's lock is held elsewhere closes each backend it opened", async () => {
  await withTempDirectory("locked", async (path) => {
    let opened = 0;
    let closed = 0;
    const refused = openCairnOn({ path }, async (directory) => {
      const backend = await openFsBackend(directory);
      opened++;
      return {
        ...backend,
        acquireLock: () => Promise.reject(new CairnError("E_LOCKED", "held by another tab")),
        close: () => (closed++, backend.close()),
      };
    });
    await assert.rejects(refused, hasCode("E_LOCKED"));
    // (An OPFS backend left open keeps its worker alive: one per attempt, until the page ends.)
    assert.ok(opened > 0);
    assert.equal(closed, opened);
  });
});

test("a directory whose cairn.json is gone goes on in its logs' format with a warning; nothing written since is lost when the old file comes back", async () => {
  await withTempDirectory("open-failures", async (path) => {
    const first = await Cairn.open({ path, format: "jsonl", schemas: [Doc] });
    (await first.open("/docs")).create(Doc, { title: "before" }, { key: "a" });
    await first.close();
    const settings = join(path, "cairn.json");
    const original = await readFile(settings);
    await rm(settings);
    const left = await files(path);

    await assert.rejects(
      Cairn.open({ path, format: "binary", schemas: [Doc] }),
      hasCode("E_BAD_ARGUMENT", /cairn\.json is missing, and the logs there are jsonl, not binary/),
    );
    assert.deepEqual(await files(path), left, "nothing written");

    const warnings: string[] = [];
    const onWarning = ({ message }: { message: string }) => warnings.push(message);
    const second = await Cairn.open({ path, schemas: [Doc], onWarning });
    const docs = await second.open("/docs");
    assert.equal(docs.get("a", Doc)?.get("title"), "before");
    docs.create(Doc, { title: "after" }, { key: "b" });
    await second.close();
    assert.match(warnings[0], /was missing beside jsonl logs: .* a new session key/);
    // The checkpoint, signed with the old key, is read from the log anew.
    assert.deepEqual(warnings.slice(1).map((warning) => warning.split(":")[0]), [
      "rebuilt from the log",
    ]);
    assert.deepEqual((await files(path)).filter((name) => name.endsWith(".log")), []);

    await writeFile(settings, original);
    const third = await Cairn.open({ path, schemas: [Doc] });
    const titles = (await third.open("/docs")).query({ schema: Doc, sortBy: "title" }).results
      .map((doc) => doc.get("title"));
    assert.deepEqual(titles, ["after", "before"]);
    await third.close();

    await rm(settings);
    await writeFile(join(path, "other.log"), binaryLog.header());
    await assert.rejects(
      Cairn.open({ path }),
      hasCode("E_NOT_A_LOG", /missing, and the directory holds logs of both formats/),
    );
  });
});

test("a new database beside files that only look like logs (an app's server.log, a directory named so, a name no repository has) opens as asked, with no warning", async () => {
  await withTempDirectory("open-failures", async (path) => {
    await writeFile(join(path, "server.log"), "12:00 started\n");
    await writeFile(join(path, "a b.jsonl"), "{}\n");
    await writeFile(join(path, "empty.log"), "");
    await mkdir(join(path, "backup.log"));
    const warnings: string[] = [];
    const onWarning = ({ message }: { message: string }) => warnings.push(message);
    const db = await Cairn.open({ path, format: "jsonl", schemas: [Doc], onWarning });
    (await db.open("/docs")).create(Doc, { title: "new" });
    await db.close();
    assert.deepEqual(warnings, []);
    assert.equal(JSON.parse(await readFile(join(path, "cairn.json"), "utf8")).format, "jsonl");
    assert.equal(await readFile(join(path, "server.log"), "utf8"), "12:00 started\n");
  });
});
