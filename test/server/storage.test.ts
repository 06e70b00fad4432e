import { test } from "node:test";
import assert from "node:assert/strict";
import { readdir, readFile, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { sealBlock } from "../../src/core/block.ts";
import { cryptoSuite } from "../../src/runtime/crypto_suite.ts";
import { LOG_FORMATS } from "../../src/storage/log_convert.ts";
import { ALL_TYPES } from "../harness/schemas.ts";
import { withTempDirectory } from "../harness/temp_directory.ts";
import {
  Cairn,
  type CairnErrorCode,
  defineSchema,
  isCairnError,
  type RepositoryHandle,
} from "cairndb";

const Everything = defineSchema(ALL_TYPES);

function snapshot(repo: RepositoryHandle) {
  return [...repo.keys()].sort().map((key) => ({
    key,
    value: repo.get(key, Everything)!.toObject(),
    leaves: [...repo.leaves(key)].sort(),
  }));
}

function fill(repo: RepositoryHandle, count: number): void {
  for (let i = 0; i < count; i++) {
    const item = repo.create(Everything, {
      title: `Item ${i}`,
      rank: i,
      done: i % 2 === 0,
      due: new Date(1_700_000_000_000 + i),
      tags: new Set([`tag${i}`, `category${i % 5}`]),
      meta: new Map<string, string | number | boolean | null>([["i", i], ["odd", i % 2 === 1]]),
      notes: `note ${i}`,
      likes: i * 2,
    }, { key: `k${i}` });
    if (i % 3 === 0) item.set("notes", `edited ${i}`);
    if (i % 7 === 0) item.delete();
  }
}

for (const format of ["binary", "jsonl"] as const) {
  test(`${format}: every field type survives close and reopen — same values, leaves, keys, session`, async () => {
    await withTempDirectory("storage", async (path) => {
      const db = await Cairn.open({ path, format });
      const repo = await db.open("/data/all");
      fill(repo, 300);
      const before = snapshot(repo);
      const session = db.session.id;
      await db.close();

      const again = await Cairn.open({ path });
      const reopened = await again.open("/data/all");
      assert.equal(again.session.id, session, "the session (key pair) persists");
      assert.deepEqual(snapshot(reopened), before);
      assert.equal(reopened.count(), before.length);
      assert.deepEqual(reopened.stats(), { damaged: [], tornTailBytes: 0, unloadable: [] });
      // And it keeps working: new writes after reopening survive another reopen.
      reopened.get("k1", Everything)!.set("title", "after reopen");
      reopened.create(Everything, { title: "new" }, { key: "new" });
      const after = snapshot(reopened);
      await again.close();
      const third = await Cairn.open({ path });
      assert.deepEqual(snapshot(await third.open("/data/all")), after);
      await third.close();
    });
  });
}

test("open() while the path's close runs waits for it and gives a new handle on the stored data", async () => {
  await withTempDirectory("storage", async (path) => {
    const db = await Cairn.open({ path, schemas: [Everything] });
    const repo = await db.open("/data/r");
    repo.create(Everything, { title: "one" }, { key: "a" });
    const closing = db.close("/data/r");
    const reopened = await db.open("/data/r");
    await closing;
    assert.notEqual(reopened, repo);
    reopened.create(Everything, { title: "two" }, { key: "b" }); // was E_CLOSED
    assert.deepEqual([...reopened.keys()].sort(), ["a", "b"]);
    await db.close();
  });
});

test("reopening with another session's secretKey is refused; the same one is accepted", async () => {
  await withTempDirectory("storage", async (path) => {
    const db = await Cairn.open({ path });
    const secretKey = db.exportSecretKey();
    await db.close();
    const stranger = (await Cairn.open()).exportSecretKey();
    await assert.rejects(
      Cairn.open({ path, secretKey: stranger }),
      (err) => isCairnError(err, "E_BAD_ARGUMENT"),
    );
    const again = await Cairn.open({ path, secretKey });
    assert.equal(again.session.id, db.session.id);
    await again.close();
  });
});

test("a database opened with the other format is refused with a clear error, nothing changed", async () => {
  await withTempDirectory("storage", async (path) => {
    const db = await Cairn.open({ path, format: "jsonl" });
    (await db.open("/r")).create(Everything, { title: "x" }, { key: "x" });
    await db.close();
    const files = await readdir(path);
    await assert.rejects(Cairn.open({ path, format: "binary" }), (err) => {
      assert.ok(isCairnError(err, "E_BAD_ARGUMENT"));
      // It says what the database is and where conversion is explained, and names no file the
      // npm package lacks (the conversion script is in the source repository only).
      assert.match(err.message, /uses the jsonl format, not binary/);
      assert.match(err.message, /"Converting between formats" in Cairn's docs\/storage\.md/);
      assert.doesNotMatch(err.message, /scripts\//);
      return true;
    });
    assert.deepEqual(await readdir(path), files);
  });
});

test("bad files in place of a log: typed errors, and the file is left untouched", async () => {
  const random = Uint8Array.from({ length: 4096 }, (_, i) => (i * 7919 + 13) & 0xff);
  const cases: { name: string; bytes: Uint8Array; code?: CairnErrorCode }[] = [
    { name: "random bytes", bytes: random, code: "E_NOT_A_LOG" },
    {
      name: "a JSONL log in a binary database",
      bytes: new TextEncoder().encode('{"cairn":"log","format":"jsonl","version":1}\n'),
      code: "E_NOT_A_LOG",
    },
    { name: "an empty file", bytes: new Uint8Array() },
  ];
  for (const { name, bytes, code } of cases) {
    await withTempDirectory("storage", async (path) => {
      const db = await Cairn.open({ path });
      await db.close();
      await writeFile(join(path, "r.log"), bytes);
      const again = await Cairn.open({ path });
      if (code) {
        await assert.rejects(again.open("/r"), (err) => isCairnError(err, code), name);
        assert.deepEqual(
          new Uint8Array(await readFile(join(path, "r.log"))),
          bytes,
          `${name}: untouched`,
        );
      } else {
        assert.equal((await again.open("/r")).count(), 0, name);
      }
      await again.close();
    });
  }
});

test("a settings file from a newer version is refused, not overwritten", async () => {
  await withTempDirectory("storage", async (path) => {
    const newer = JSON.stringify({
      cairn: "database",
      version: 99,
      format: "binary",
      secretKey: "x",
    });
    await writeFile(join(path, "cairn.json"), newer);
    await assert.rejects(Cairn.open({ path }), (err) => isCairnError(err, "E_UNSUPPORTED_VERSION"));
    assert.equal(await readFile(join(path, "cairn.json"), "utf8"), newer);
    // The lock was released: the failed open does not leave the directory locked.
    await writeFile(join(path, "cairn.json"), "not json");
    await assert.rejects(Cairn.open({ path }), (err) => isCairnError(err, "E_NOT_A_LOG"));
  });
});

for (const format of ["binary", "jsonl"] as const) {
  test(`${format}: a log cut at every byte of its last records still opens, keeping every whole record`, async () => {
    await withTempDirectory("storage", async (path) => {
      const db = await Cairn.open({ path, format });
      const repo = await db.open("/cut");
      for (let i = 0; i < 5; i++) {
        repo.create(Everything, { title: `Item ${i}` }, { key: `k${i}` });
        await repo.flush(); // one block per item
      }
      await db.close();
      const file = join(path, format === "binary" ? "cut.log" : "cut.jsonl");
      const whole = new Uint8Array(await readFile(file));
      // Where each record ends: reopen prefixes and see how many items survive.
      let previousCount = 0;
      for (let cut = whole.length; cut >= whole.length - 400 && cut > 0; cut--) {
        await writeFile(file, whole.subarray(0, cut));
        // This test is about the log alone: no checkpoint to start from.
        await rm(join(path, "cut.ckpt"), { force: true });
        const warnings: string[] = [];
        const again = await Cairn.open({ path, onWarning: (w) => warnings.push(w.message) });
        const reopened = await again.open("/cut");
        const count = reopened.count();
        assert.ok(count <= 5 && count >= 0, `cut at ${cut}`);
        if (cut < whole.length) {
          assert.ok(count <= previousCount || previousCount === 0, `cut at ${cut}: monotone`);
        }
        for (let i = 0; i < count; i++) {
          assert.ok(reopened.has(`k${i}`), `cut at ${cut}: a prefix survives`);
        }
        const { tornTailBytes, damaged } = reopened.stats();
        assert.deepEqual(damaged, [], `cut at ${cut}: a cut is a torn tail, not damage`);
        assert.equal(
          warnings.length,
          tornTailBytes > 0 ? 1 : 0,
          `cut at ${cut}: ${warnings.join("; ")}`,
        );
        previousCount = count;
        await again.close();
      }
    });
  });
}

for (const format of ["binary", "jsonl"] as const) {
  test(`${format}: a log whose header lost a bit opens with every item, says so, and takes writes`, async () => {
    await withTempDirectory("storage", async (path) => {
      const db = await Cairn.open({ path, format });
      fill(await db.open("/data/flipped"), 40);
      const before = snapshot(await db.open("/data/flipped"));
      await db.close();
      const file = join(path, format === "binary" ? "data~flipped.log" : "data~flipped.jsonl");
      const bytes = new Uint8Array(await readFile(file));
      bytes[2] ^= 0x04; // "CAIRNB" / '{"cairn"…' with one bit flipped
      await writeFile(file, bytes);
      await rm(join(path, "data~flipped.ckpt"), { force: true }); // the log alone
      const warnings: string[] = [];
      const again = await Cairn.open({ path, onWarning: (w) => warnings.push(w.message) });
      const reopened = await again.open("/data/flipped"); // E_NOT_A_LOG before
      assert.deepEqual(snapshot(reopened), before);
      assert.deepEqual(reopened.stats().damaged.map((d) => d.offset), [0]);
      assert.ok(warnings.some((w) => w.includes("header damaged")), warnings.join("; "));
      reopened.create(Everything, { title: "after" }, { key: "after" });
      const after = snapshot(reopened);
      await again.close();
      const third = await Cairn.open({ path });
      assert.deepEqual(snapshot(await third.open("/data/flipped")), after);
      await third.close();
    });
  });
}

for (const checkpoint of ["kept", "removed"] as const) {
  test(`jsonl: a log whose line breaks became \\r\\n (git autocrlf) opens whole, cuts nothing, takes writes (checkpoint ${checkpoint})`, async () => {
    await withTempDirectory("storage", async (path) => {
      const db = await Cairn.open({ path, format: "jsonl" });
      const repo = await db.open("/crlf");
      fill(repo, 30);
      for (let i = 0; i < 5; i++) {
        repo.create(Everything, { title: `later ${i}` }, { key: `later${i}` });
        await repo.flush(); // a block each
      }
      const before = snapshot(repo);
      await db.close();
      const file = join(path, "crlf.jsonl");
      await writeFile(file, (await readFile(file, "utf8")).replaceAll("\n", "\r\n"));
      // A kept checkpoint names the file as it was (length, CRC): it no longer matches, and
      // opening reads the whole log.
      if (checkpoint === "removed") await rm(join(path, "crlf.ckpt"), { force: true });
      const warnings: string[] = [];
      const again = await Cairn.open({ path, onWarning: (w) => warnings.push(w.message) });
      const reopened = await again.open("/crlf");
      assert.deepEqual(snapshot(reopened), before);
      assert.deepEqual(reopened.stats().damaged, []);
      assert.equal(reopened.stats().tornTailBytes, 0);
      assert.ok(!warnings.some((w) => /torn|cut/.test(w)), warnings.join("; "));
      reopened.create(Everything, { title: "after" }, { key: "after" });
      const after = snapshot(reopened);
      await again.close();
      const last = await Cairn.open({ path });
      assert.deepEqual(snapshot(await last.open("/crlf")), after);
      await last.close();
    });
  });
}

for (const format of LOG_FORMATS) {
  test(`${format.name}: a log of version 1 blocks (before sessions were named once per block) opens and grows`, async () => {
    await withTempDirectory("storage", async (path) => {
      const db = await Cairn.open({ path, format: format.name });
      const repo = await db.open("/data/all");
      fill(repo, 60); // creates, local updates (own parents), deletes
      const before = snapshot(repo);
      const secretKey = db.exportSecretKey();
      await db.close();

      // The same blocks as the previous layout wrote them: re-sealed as version 1, chained anew.
      const suite = await cryptoSuite();
      const key = await suite.ed25519.fromSecret(secretKey);
      const files = await readdir(path);
      const logName = files.find((name) => name.endsWith(format.fileExtension))!;
      const scan = await format.scan(await readFile(join(path, logName)), suite);
      assert.ok(scan.blocks.length > 0 && scan.blocks.every((b) => b.block.version === undefined));
      const legacy = [];
      let prev = "";
      for (const { block } of scan.blocks) {
        const { signature: _, ...fields } = block;
        const sealed = await sealBlock({ ...fields, prev, version: 1 }, {
          key,
          ed25519: suite.ed25519,
        }, suite);
        legacy.push(sealed);
        prev = sealed.hash;
      }
      assert.ok(legacy.every((sealed) => sealed.body[1] === 1), "version 1 bodies");
      const bytes = new Uint8Array([...format.header(), ...format.encode(legacy).bytes]);
      await writeFile(join(path, logName), bytes);
      for (const name of files.filter((name) => name.endsWith(".ckpt"))) await rm(join(path, name));

      const again = await Cairn.open({ path });
      const reopened = await again.open("/data/all");
      assert.deepEqual(reopened.stats(), { damaged: [], tornTailBytes: 0, unloadable: [] });
      assert.deepEqual(snapshot(reopened), before);
      // New writes continue both chains (commits and blocks) in the current layout.
      reopened.get("k1", Everything)!.set("title", "after the upgrade");
      reopened.create(Everything, { title: "new" }, { key: "new" });
      const after = snapshot(reopened);
      // A peer gets both kinds of block, as they were signed, and holds the same.
      const peerDb = await Cairn.open({});
      await peerDb.trust(again.session.publicKey);
      const peer = await peerDb.open("/data/all");
      await reopened.flush();
      const report = await peer.importBlocks(await reopened.exportBlocks());
      assert.deepEqual(report.rejected, []);
      assert.deepEqual(snapshot(peer), after);
      await peerDb.close();
      await again.close();
      const third = await Cairn.open({ path });
      assert.deepEqual(snapshot(await third.open("/data/all")), after);
      await third.close();
      const grown = await format.scan(await readFile(join(path, logName)), suite);
      const versions = grown.blocks.map(({ body }) => body[1]);
      assert.deepEqual(versions, [...legacy.map(() => 1), 2], "old blocks kept, new ones current");
    });
  });
}
