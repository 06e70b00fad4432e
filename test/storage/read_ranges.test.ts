/**
 * Files read in pieces, on real storage (node:fs on Deno and Node, OPFS in the browser): the
 * backend's `readRange`, the sources built on it (storage/byte_source.ts), and a repository log
 * opened, checked against a checkpoint, read back for history and after a failed sync with
 * windows of a few bytes — each giving exactly what one whole read gives.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import type { SealedBlock } from "../../src/core/block.ts";
import type { CryptoSuite } from "../../src/core/signing.ts";
import { cryptoSuite } from "../../src/runtime/crypto_suite.ts";
import {
  crc32cOf,
  fileSource,
  forceReadWindow,
  joinedSource,
  prefixSource,
  readFileBytes,
} from "../../src/storage/byte_source.ts";
import type { Checkpoint } from "../../src/storage/checkpoint.ts";
import { crc32c } from "../../src/storage/crc32c.ts";
import { LOG_FORMATS } from "../../src/storage/log_convert.ts";
import type { LogFormat, LogScan } from "../../src/storage/log_format.ts";
import { RepositoryLog } from "../../src/storage/repository_log.ts";
import { trustedChain } from "../harness/blocks.ts";
import { FailingCalls, faultyBackend } from "../harness/faulty_backend.ts";
import { recordSpans } from "../harness/log_records.ts";
import { withScratchBackend } from "../harness/scratch_backend.ts";
import { concatBytes } from "../harness/concat_bytes.ts";

/**
 * Windows that end inside frames, magics and lines, and the default (32 MiB: one window). Not
 * one byte: in the browser each read is a round trip to the OPFS worker (log_windows.test.ts
 * scans in memory with windows from one byte up).
 */
const WINDOWS = [7, 97, undefined];

let fixture: Promise<{ suite: CryptoSuite; blocks: SealedBlock[] }> | undefined;

/** 12 trusted blocks of one session, of varied sizes. */
function setup() {
  fixture ??= (async () => {
    const suite = await cryptoSuite();
    return { suite, blocks: await trustedChain(suite, 12, (seq) => (seq * 53) % 400) };
  })();
  return fixture;
}

/** Runs `body` with every log read `window` bytes at a time (undefined: the default). */
async function withWindow<T>(window: number | undefined, body: () => Promise<T>): Promise<T> {
  const restore = window === undefined ? () => {} : forceReadWindow(window);
  try {
    return await body();
  } finally {
    restore();
  }
}

const concat = (...parts: Uint8Array[]) => concatBytes(parts);

function plain(scan: LogScan) {
  return {
    blocks: scan.blocks.map((sealed) => sealed.hash),
    blockOffsets: scan.blockOffsets,
    validEnd: scan.validEnd,
    appendFirst: [...scan.appendFirst],
    damaged: scan.damaged,
    tornTail: scan.tornTail,
  };
}

const pattern = (length: number) => Uint8Array.from({ length }, (_, i) => (i * 7 + 3) & 0xff);

test("readRange: any range of a file with its size; past the end, no bytes; a missing file", async () => {
  await withScratchBackend("read-range", async (backend) => {
    const bytes = pattern(1000);
    await backend.writeFileAtomic("f.bin", bytes);
    for (const [offset, length] of [[0, 10], [0, 1000], [0, 5000], [990, 100], [500, 0]]) {
      const range = await backend.readRange("f.bin", offset, length);
      assert.equal(range?.size, 1000);
      assert.deepEqual(range?.bytes, bytes.slice(offset, offset + length), `${offset}+${length}`);
    }
    for (const offset of [1000, 1500]) {
      const range = await backend.readRange("f.bin", offset, 10);
      assert.deepEqual(range, { bytes: new Uint8Array(0), size: 1000 });
    }
    assert.equal(await backend.readRange("missing.bin", 0, 10), undefined);
    assert.deepEqual(await backend.readFile("f.bin"), bytes);
  });
});

test("readRange: a file open for appending reads with every append made before it", async () => {
  await withScratchBackend("read-range-open", async (backend) => {
    const file = await backend.openAppend("a.log");
    await file.append(pattern(300));
    await file.append(pattern(50));
    const range = await backend.readRange("a.log", 290, 100);
    assert.equal(range?.size, 350);
    assert.deepEqual(range?.bytes, concat(pattern(300), pattern(50)).slice(290));
    await file.close();
  });
});

test("fileSource, readFileBytes: reads and checksums in any window equal those of the bytes", async () => {
  await withScratchBackend("file-source", async (backend) => {
    const bytes = pattern(777);
    await backend.writeFileAtomic("s.bin", bytes);
    assert.equal((await fileSource(backend, "none.bin")).length, 0);
    for (const window of [3, 64, 776, 777, 4096]) {
      const source = await fileSource(backend, "s.bin", window);
      assert.equal(source.length, 777);
      assert.deepEqual(await source.read(700, 77), bytes.slice(700));
      assert.deepEqual(await source.read(3, 2), bytes.slice(3, 5));
      assert.equal(await crc32cOf(source, 0, 777, 0, window), crc32c(bytes));
      assert.equal(
        await crc32cOf(source, 100, 600, crc32c(bytes.subarray(0, 100)), window),
        crc32c(bytes.subarray(0, 600)),
      );
      assert.deepEqual(
        await readFileBytes(backend, "s.bin", 10, 700, window),
        bytes.slice(10, 700),
      );
      assert.deepEqual(await readFileBytes(backend, "s.bin", 700, 900, window), bytes.slice(700));
      assert.deepEqual(await readFileBytes(backend, "none.bin", 0, 9, window), new Uint8Array(0));
      const prefix = prefixSource(source, 500);
      assert.equal(prefix.length, 500);
      assert.equal(prefixSource(source, 5000).length, 777);
      const head = Uint8Array.of(9, 8, 7);
      const joined = joinedSource(head, source, 700);
      assert.equal(joined.length, 80);
      assert.deepEqual(await joined.read(0, 80), concat(head, bytes.slice(700)));
      assert.deepEqual(await joined.read(2, 3), concat(head.slice(2), bytes.slice(700, 702)));
    }
  });
});

test("fileSource: a file cut short while it is read is E_IO", async () => {
  await withScratchBackend("file-source-cut", async (backend) => {
    await backend.writeFileAtomic("c.bin", pattern(100));
    const source = await fileSource(backend, "c.bin", 10);
    await backend.writeFileAtomic("c.bin", pattern(40));
    await assert.rejects(
      source.read(30, 20),
      (err) => (err as { code?: string }).code === "E_IO" && /cut short/.test(String(err)),
    );
  });
});

/**
 * A log of `blocks` with damage in the middle (a flipped byte in the 5th record) and, if `torn`,
 * a torn tail (the last record cut in two), and the record spans of the whole one.
 */
function damagedLog(format: LogFormat, blocks: readonly SealedBlock[], torn: boolean) {
  const whole = concat(format.header(), format.encode(blocks).bytes);
  const spans = recordSpans(format.name, whole);
  const bytes = whole.slice(0, torn ? spans[spans.length - 1][0] + 20 : whole.length);
  bytes[spans[4][0] + 15] ^= 0x5a;
  return { bytes, spans };
}

for (const format of LOG_FORMATS) {
  for (const torn of [true, false]) {
    const what = torn ? "reads, cuts and continues" : "reads and continues";
    test(`${format.name}: a log opened a few bytes at a time ${what} as with one read`, async () => {
      const { suite, blocks } = await setup();
      const { bytes, spans } = damagedLog(format, blocks.slice(0, 11), torn);
      // A checkpoint covering the first three records (only its length and CRC are read here).
      const covered = spans[2][1];
      const checkpoint = { logLength: covered, logCrc: crc32c(bytes.subarray(0, covered)) };
      await withScratchBackend(`log-windows-${format.name}`, async (backend) => {
        const name = `r${format.fileExtension}`;
        const results = [];
        for (const window of WINDOWS) {
          for (const withCheckpoint of [false, true]) {
            await backend.writeFileAtomic(name, bytes);
            results.push(
              await withWindow(window, async () => {
                const opened = await RepositoryLog.open(
                  backend,
                  name,
                  await fileSource(backend, name),
                  format,
                  "relaxed",
                  suite,
                  withCheckpoint ? checkpoint as unknown as Checkpoint : undefined,
                );
                const { log } = opened;
                const prefix = await log.readPrefix(covered);
                await log.append(blocks[11]);
                const result = {
                  window,
                  scan: plain(opened.scan),
                  fromCheckpoint: opened.fromCheckpoint,
                  prefix: plain(prefix),
                  position: log.position(),
                };
                await log.close();
                return { ...result, file: await backend.readFile(name) };
              }),
            );
          }
        }
        const [whole, wholeFromCheckpoint] = results.slice(-2);
        // What one read gives: damage reported, the torn tail cut, the next block appended.
        assert.equal(wholeFromCheckpoint.fromCheckpoint, true);
        assert.equal(whole.scan.damaged.length, 1);
        assert.equal(whole.scan.tornTail?.offset, torn ? spans[spans.length - 1][0] : undefined);
        assert.deepEqual(whole.prefix.blocks, blocks.slice(0, 3).map((b) => b.hash));
        const file = whole.file!;
        assert.deepEqual(whole.position, { length: file.length, crc: crc32c(file) });
        for (const [i, result] of results.entries()) {
          const expected = i % 2 === 0 ? whole : wholeFromCheckpoint;
          assert.deepEqual({ ...result, window: undefined }, { ...expected, window: undefined });
        }
      });
    });
  }

  test(`${format.name}: bytes a failed sync covered are read back a few bytes at a time`, async () => {
    const { suite, blocks } = await setup();
    await withScratchBackend(`read-back-${format.name}`, async (real) => {
      const plan = new FailingCalls();
      const faulty = faultyBackend(real, plan);
      const name = `b${format.fileExtension}`;
      try {
        await withWindow(7, async () => {
          const { log } = await RepositoryLog.open(
            faulty,
            name,
            await fileSource(faulty, name),
            format,
            "relaxed",
            suite,
            undefined,
          );
          await log.append(blocks[0]);
          await log.sync();
          // Relaxed: appended, not synced; the failed sync must read them back to write again.
          for (const block of blocks.slice(1, 6)) await log.append(block);
          plan.failing.add("sync");
          await assert.rejects(log.sync(), (err) => (err as { code?: string }).code === "E_IO");
          plan.clear();
          await log.sync();
          const file = (await real.readFile(name))!;
          const scan = await format.scan(file, suite);
          assert.deepEqual(scan.blocks.map((b) => b.hash), blocks.slice(0, 6).map((b) => b.hash));
          assert.deepEqual(log.position(), { length: file.length, crc: crc32c(file) });
          await log.close();
        });
      } finally {
        await faulty.closeFiles();
      }
    });
  });
}
