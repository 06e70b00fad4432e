/**
 * `cairndb inspect` and `cairndb verify` run as child processes on Deno and on Node, against
 * databases written by Cairn and against damaged copies: what they report (read through their
 * --json output), their exit codes, and that they leave every file byte for byte as it was.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdir, readFile, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { Cairn, defineSchema } from "cairndb";
import { isCairnError } from "../../src/core/errors.ts";
import { readStoredDatabase, readStoredRepository } from "../../src/cli/stored_database.ts";
import { crc32c } from "../../src/storage/crc32c.ts";
import { CLI_RUNTIMES, directoryContents, runCli } from "../harness/cli.ts";
import { recordSpans } from "../harness/log_records.ts";
import { withTempDirectory } from "../harness/temp_directory.ts";
import { TITLE_AND_NUMBER } from "../harness/schemas.ts";

const Note = defineSchema(TITLE_AND_NUMBER);

/** A database with /data/notes (one block per item: `count` blocks) and /empty. */
async function makeDatabase(path: string, format: "binary" | "jsonl", count: number) {
  const db = await Cairn.open({ path, format });
  const notes = await db.open("/data/notes");
  for (let i = 0; i < count; i++) {
    notes.create(Note, { title: `note ${i}`, n: i }, { key: `k${i}` });
    await notes.flush();
  }
  await db.open("/empty");
  await db.close();
  return db.session.id;
}

interface RepositoryReport {
  path: string;
  items: number;
  sessions: number;
  blocks: number;
  log: { file: string; format: string; bytes: number };
  damaged: { offset: number; length: number }[];
  tornTailBytes: number;
  checkpoint: null | { bytes: number; ageSeconds: number; usable: boolean; problem?: string };
}

interface Problem {
  file: string;
  offset?: number;
  block?: string;
  problem: string;
}

test("cairndb inspect and verify: a whole database, on Deno and Node", async () => {
  await withTempDirectory("cli-inspect", async (dir) => {
    const session = await makeDatabase(dir, "binary", 4);
    const before = await directoryContents(dir);
    for (const runtime of CLI_RUNTIMES) {
      const inspected = await runCli(runtime, ["inspect", dir, "--json"]);
      assert.equal(inspected.code, 0, inspected.stderr);
      assert.equal(inspected.stderr, "", "no progress line when standard error is not a terminal");
      const report = JSON.parse(inspected.stdout);
      assert.equal(report.format, "binary");
      assert.equal(report.session, session);
      const [notes, empty] = report.repositories as RepositoryReport[];
      assert.equal(empty.path, "/empty");
      assert.equal(empty.items, 0);
      assert.equal(empty.blocks, 0);
      assert.equal(notes.path, "/data/notes");
      assert.equal(notes.items, 4);
      assert.equal(notes.sessions, 1);
      assert.equal(notes.blocks, 4);
      assert.deepEqual(notes.log.file, "data~notes.log");
      assert.equal(notes.log.bytes, before["data~notes.log"].length);
      assert.deepEqual(notes.damaged, []);
      assert.equal(notes.tornTailBytes, 0);
      assert.equal(notes.checkpoint?.usable, true);
      assert.equal(notes.checkpoint?.bytes, before["data~notes.ckpt"].length);

      const text = await runCli(runtime, ["inspect", dir]);
      assert.equal(text.code, 0);
      assert.match(text.stdout, /\/data\/notes\n {2}items +4\n/);

      const verified = await runCli(runtime, ["verify", dir, "--json"]);
      assert.equal(verified.code, 0, verified.stdout);
      assert.deepEqual(JSON.parse(verified.stdout), {
        repositories: 2,
        blocks: 4,
        unsigned: 0,
        problems: [],
      });
    }
    assert.deepEqual(await directoryContents(dir), before, "nothing was written");
  });
});

for (const format of ["binary", "jsonl"] as const) {
  test(`cairndb inspect and verify (${format}): a damaged record, a torn tail and a stale checkpoint are reported, and every file stays as it was`, async () => {
    await withTempDirectory("cli-damage", async (dir) => {
      const session = await makeDatabase(dir, format, 5);
      const logName = `data~notes.${format === "binary" ? "log" : "jsonl"}`;
      const logPath = join(dir, logName);
      const log = new Uint8Array(await readFile(logPath));
      const spans = recordSpans(format, log);
      // Damage the third record's middle byte, and leave half of a record after the last.
      const [start, end] = spans[2];
      log[start + Math.floor((end - start) / 2)] ^= 0x55;
      const [lastStart, lastEnd] = spans[4];
      const damaged = new Uint8Array(log.length + Math.floor((lastEnd - lastStart) / 2));
      damaged.set(log);
      damaged.set(log.subarray(lastStart, lastStart + damaged.length - log.length), log.length);
      await writeFile(logPath, damaged);
      const before = await directoryContents(dir);

      for (const runtime of CLI_RUNTIMES) {
        const inspected = await runCli(runtime, ["inspect", dir, "--json"]);
        assert.equal(inspected.code, 0, inspected.stderr);
        const notes = (JSON.parse(inspected.stdout).repositories as RepositoryReport[])[0];
        assert.equal(notes.blocks, 4, "the damaged record is skipped");
        assert.equal(notes.items, 4, "the item of the lost block is missing");
        assert.deepEqual(notes.damaged.map((d) => d.offset), [start]);
        assert.equal(notes.tornTailBytes, damaged.length - log.length);
        assert.equal(notes.checkpoint?.usable, false, "the log it covers has changed");

        const verified = await runCli(runtime, ["verify", dir, "--json"]);
        assert.equal(verified.code, 1, verified.stderr);
        const problems = JSON.parse(verified.stdout).problems as Problem[];
        assert.deepEqual(
          problems.map(({ file, offset, block }) => ({ file, offset, block })),
          [
            { file: logName, offset: start, block: undefined },
            { file: logName, offset: log.length, block: undefined },
            { file: logName, offset: undefined, block: `${session}/3` },
            { file: "data~notes.ckpt", offset: undefined, block: undefined },
          ],
        );
        const text = await runCli(runtime, ["verify", dir]);
        assert.equal(text.code, 1);
        assert.match(text.stdout, new RegExp(`^${logName}: byte ${start}: damaged record`, "m"));
        assert.match(text.stdout, /^4 problems in 2 repositories/m);
      }
      assert.deepEqual(await directoryContents(dir), before, "damaged files included");
    });
  });
}

for (const format of ["binary", "jsonl"] as const) {
  test(`cairndb inspect, verify, export (${format}): a log that cannot be read is named; inspect and verify go on with the other repositories`, async () => {
    await withTempDirectory("cli-unreadable", async (dir) => {
      await makeDatabase(dir, format, 4);
      const extension = format === "binary" ? "log" : "jsonl";
      // A stray file with the log's extension (/a/stray, read first), and a header overwritten.
      await writeFile(join(dir, `a~stray.${extension}`), "not a Cairn log\n");
      const empty = join(dir, `empty.${extension}`);
      const header = new Uint8Array(await readFile(empty));
      header.fill(0x58, 0, 8);
      await writeFile(empty, header);
      const before = await directoryContents(dir);
      const notALog = /^E_NOT_A_LOG: not a \w+ log/;

      for (const runtime of CLI_RUNTIMES) {
        const verified = await runCli(runtime, ["verify", dir, "--json"]);
        assert.equal(verified.code, 1, verified.stderr);
        const report = JSON.parse(verified.stdout);
        assert.equal(report.repositories, 3);
        assert.equal(report.blocks, 4, "/data/notes, after the stray log, is checked");
        const problems = report.problems as Problem[];
        assert.deepEqual(problems.map((problem) => problem.file), [
          `a~stray.${extension}`,
          `empty.${extension}`,
        ]);
        for (const { problem } of problems) assert.match(problem, notALog);

        const inspected = await runCli(runtime, ["inspect", dir, "--json"]);
        assert.equal(inspected.code, 0, inspected.stderr);
        const [stray, notes, unreadable] = JSON.parse(inspected.stdout).repositories;
        assert.equal(stray.path, "/a/stray");
        assert.equal(stray.unreadable.file, `a~stray.${extension}`);
        assert.match(stray.unreadable.problem, notALog);
        assert.equal(notes.items, 4);
        assert.equal(unreadable.unreadable.file, `empty.${extension}`);
        const text = await runCli(runtime, ["inspect", dir]);
        assert.match(
          text.stdout,
          new RegExp(`^/empty\n  unreadable  empty\\.${extension}: E_NOT_A_LOG`, "m"),
        );

        const exported = await runCli(runtime, ["export", dir]);
        assert.equal(exported.code, 3);
        assert.match(exported.stderr, new RegExp(`E_NOT_A_LOG: a~stray\\.${extension}: not a`));
        const one = await runCli(runtime, ["export", dir, "--repository", "/data/notes"]);
        assert.equal(one.code, 0, one.stderr);
        assert.equal(JSON.parse(one.stdout).repositories["/data/notes"].length, 4);
      }
      assert.deepEqual(await directoryContents(dir), before, "nothing was written");
    });
  });
}

test("cairndb verify: a block whose signature does not verify (its record's checksum made to fit) is named", async () => {
  await withTempDirectory("cli-signature", async (dir) => {
    const session = await makeDatabase(dir, "binary", 3);
    const logPath = join(dir, "data~notes.log");
    const log = new Uint8Array(await readFile(logPath));
    // docs/storage.md: [magic, length, CRC-32C of the payload], then the payload, which ends
    // with the 64-byte signature. Change the signature, then the checksum to match.
    const [start, end] = recordSpans("binary", log)[1];
    log[end - 1] ^= 0x01;
    new DataView(log.buffer).setUint32(start + 8, crc32c(log.subarray(start + 12, end)), true);
    await writeFile(logPath, log);
    for (const runtime of CLI_RUNTIMES) {
      const verified = await runCli(runtime, ["verify", dir, "--json"]);
      assert.equal(verified.code, 1);
      const problems = JSON.parse(verified.stdout).problems as Problem[];
      assert.equal(problems[0].block, `${session}/2`);
      assert.equal(problems[0].offset, start);
      assert.match(problems[0].problem, /^E_BAD_SIGNATURE/);
    }
  });
});

test("cairndb inspect, verify: a directory that is not a database fails with exit code 3 and creates nothing; a wrong command line exits 2", async () => {
  await withTempDirectory("cli-none", async (dir) => {
    const missing = join(dir, "nothing-here");
    for (const runtime of CLI_RUNTIMES) {
      for (const command of ["inspect", "verify", "export"]) {
        const run = await runCli(runtime, [command, missing]);
        assert.equal(run.code, 3);
        assert.match(run.stderr, /E_NOT_A_LOG: .* is not a Cairn database/);
      }
      assert.deepEqual(await directoryContents(dir), {});
      for (
        const args of [[], ["frob"], ["inspect"], ["inspect", dir, dir], ["verify", dir, "--x"]]
      ) {
        const run = await runCli(runtime, args);
        assert.equal(run.code, 2, args.join(" "));
        assert.match(run.stderr, /usage: cairndb <command>/);
      }
    }
  });
});

test("cairndb inspect, verify, export: a file named as no repository could be is not one; a log removed while the database is read is E_IO, not an empty repository", async () => {
  await withTempDirectory("cli-stray", async (path) => {
    await makeDatabase(path, "binary", 2);
    const log = await readFile(join(path, "data~notes.log"));
    for (const stray of ["a b.log", ".log", "~.log", "a~~b.log"]) {
      await writeFile(join(path, stray), log);
    }
    for (const runtime of CLI_RUNTIMES) {
      const exported = await runCli(runtime, ["export", path]);
      assert.equal(exported.code, 0, exported.stderr);
      assert.deepEqual(Object.keys(JSON.parse(exported.stdout).repositories), [
        "/data/notes",
        "/empty",
      ]);
      const verified = await runCli(runtime, ["verify", path]);
      assert.equal(verified.code, 0, verified.stdout);
    }

    // What a convert running beside a read does to it: listed, then gone.
    const db = await readStoredDatabase(path);
    try {
      await rm(join(path, "data~notes.log"));
      await assert.rejects(
        readStoredRepository(db, "/data/notes"),
        (err) => isCairnError(err, "E_IO") && /changed format while it was read/.test(err.message),
      );
    } finally {
      await db.backend.close();
    }
  });
});

test("cairndb export, inspect, verify: a checkpoint that cannot be read (a directory in its place, junk) is reported, not a reason to refuse the repository", async () => {
  await withTempDirectory("cli-checkpoint", async (path) => {
    await makeDatabase(path, "binary", 3);
    const checkpoint = join(path, "data~notes.ckpt");
    for (const variant of ["a directory", "junk"] as const) {
      await rm(checkpoint, { recursive: true, force: true });
      if (variant === "a directory") await mkdir(checkpoint);
      else await writeFile(checkpoint, new Uint8Array(200_000).fill(0x5a));
      for (const runtime of CLI_RUNTIMES) {
        const where = `${variant}, ${runtime}`;
        const exported = await runCli(runtime, ["export", path]);
        assert.equal(exported.code, 0, `${where}: ${exported.stderr}`);
        assert.equal(JSON.parse(exported.stdout).repositories["/data/notes"].length, 3, where);
        const inspected = await runCli(runtime, ["inspect", path, "--json"]);
        assert.equal(inspected.code, 0, `${where}: ${inspected.stderr}`);
        const notes = (JSON.parse(inspected.stdout).repositories as RepositoryReport[])
          .find((repo) => repo.path === "/data/notes")!;
        assert.equal(notes.items, 3, where);
        assert.equal(notes.checkpoint?.usable, false, where);
        const verified = await runCli(runtime, ["verify", path]);
        assert.equal(verified.code, 1, `${where}: ${verified.stdout}${verified.stderr}`);
        assert.match(verified.stdout, /data~notes\.ckpt: checkpoint unusable/, where);
      }
    }
  });
});
