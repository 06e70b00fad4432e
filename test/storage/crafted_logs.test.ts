/**
 * Logs crafted to make recovery slow: candidate records (a record magic, or `{"crc":"` in JSONL)
 * every few bytes, each claiming to run to the end of the file with a checksum that fails. Each
 * must cost a bounded amount (storage/range_checksums.ts), not a read of the rest of the file, and
 * the real records among them are still found.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { sealBlock, type SealedBlock } from "../../src/core/block.ts";
import { cryptoSuite } from "../../src/runtime/crypto_suite.ts";
import { binaryLog } from "../../src/storage/binary_log.ts";
import { type ByteSource, bytesSource } from "../../src/storage/byte_source.ts";
import { crc32c } from "../../src/storage/crc32c.ts";
import { jsonlLog } from "../../src/storage/jsonl_log.ts";
import { RangeChecksums } from "../../src/storage/range_checksums.ts";
import { bigBlockFields, newAuthor, trustedChain } from "../harness/blocks.ts";
import { seededRandom } from "../harness/random.ts";
import { concatBytes } from "../harness/concat_bytes.ts";

/** `bytes` as a source that counts the bytes read from it. */
function countingSource(bytes: Uint8Array): ByteSource & { read_: number } {
  const inner = bytesSource(bytes);
  const source = {
    length: bytes.length,
    read_: 0,
    read(offset: number, length: number) {
      source.read_ += length;
      return inner.read(offset, length);
    },
  };
  return source;
}

/** A record of 13 KB: long enough to be checksummed by range after damage. */
async function bigBlock(): Promise<SealedBlock> {
  const suite = await cryptoSuite();
  return await sealBlock(bigBlockFields(await newAuthor(suite), 1000), null, suite);
}

test("RangeChecksums gives the CRC-32C of any range, reading each byte about once (seeded)", async () => {
  const seed = 0x7a9e;
  const random = seededRandom(seed);
  const bytes = new Uint8Array(300_000).map(() => Math.floor(random() * 256));
  const base = 1_000;
  const source = countingSource(bytes);
  const checksums = new RangeChecksums(source, base);
  const queries = 2_000;
  for (let i = 0; i < queries; i++) {
    const from = base + Math.floor(random() * (bytes.length - base));
    // Now and then an empty range, and ranges on and next to a 2 KiB mark.
    const pick = random();
    const to = pick < 0.05
      ? from
      : pick < 0.15
      ? Math.min(bytes.length, base + 2048 * Math.ceil((from - base) / 2048) + (i % 3) - 1)
      : from + Math.floor(random() * (bytes.length - from + 1));
    const range = [from, Math.max(from, to)] as const;
    assert.equal(
      await checksums.of(...range),
      crc32c(bytes.subarray(...range)),
      `seed ${seed}: range ${range}`,
    );
  }
  assert.equal(await checksums.of(base, bytes.length), crc32c(bytes.subarray(base)));
  // One pass over the file, then at most two marks' worth of bytes per range.
  assert.ok(source.read_ <= bytes.length + queries * 2 * 2048, `read ${source.read_} bytes`);
});

test("binary log: overlapping fake records after damage cost a bounded read each", async () => {
  const suite = await cryptoSuite();
  const real = await bigBlock();
  const tail = binaryLog.encode([real]).bytes;
  const header = binaryLog.header();
  // 12,000 fake frames 16 bytes apart, each claiming to run to near the end of the file, each a
  // byte further than the one before (so that a scan reading each claim whole reads it afresh).
  const count = 12_000;
  const fakes = new Uint8Array(count * 16);
  const view = new DataView(fakes.buffer);
  const total = header.length + fakes.length + tail.length;
  for (let i = 0; i < count; i++) {
    const at = i * 16;
    fakes.set([0xc1, 0x52, 0x45, 0x43], at);
    view.setUint32(at + 4, total - (count - i) - (header.length + at) - 12, true);
    view.setUint32(at + 8, 0x12345678, true);
  }
  const bytes = concatBytes([header, fakes, tail]);
  for (const window of [4096, 64 * 1024, undefined]) {
    const source = countingSource(bytes);
    const scan = await binaryLog.scan(source, suite, { window });
    assert.deepEqual(scan.blocks.map((block) => block.hash), [real.hash], `window ${window}`);
    assert.deepEqual(
      scan.damaged.map((run) => [run.offset, run.length]),
      [[header.length, fakes.length]],
    );
    // Windows, one pass of RangeChecksums, and at most two of its 2 KiB steps per fake: ~50 MB.
    // Before, each fake read (and checksummed) the rest of the file: ~1.2 GB here.
    const bound = 4 * bytes.length + count * 2 * 2048;
    assert.ok(source.read_ <= bound, `window ${window}: read ${source.read_} bytes`);
  }
});

test("binary log: intact records after damage, long and short, are all kept", async () => {
  const suite = await cryptoSuite();
  const small = await trustedChain(suite, 3, (seq) => seq * 40);
  const big = await bigBlock();
  const header = binaryLog.header();
  const garbage = new Uint8Array(100).fill(0xc1);
  const records = [small[0], big, small[1], big, small[2]].map((b) => binaryLog.encode([b]).bytes);
  const bytes = concatBytes([header, garbage, ...records]);
  for (const window of [1, 4096, undefined]) {
    const scan = await binaryLog.scan(bytes, suite, { window });
    assert.deepEqual(
      scan.blocks.map((block) => block.hash),
      [small[0], big, small[1], big, small[2]].map((block) => block.hash),
    );
    assert.deepEqual(scan.damaged.map((run) => [run.offset, run.length]), [[8, 100]]);
  }
});

test("jsonl log: a line of many fake records still yields the real one at its end", async () => {
  const suite = await cryptoSuite();
  const real = await bigBlock();
  const header = jsonlLog.header();
  const record = jsonlLog.encode([real]).bytes;
  // A line that lost its "\n": 20,000 fake record starts, then the real record.
  const fakes = new TextEncoder().encode(`{"crc":"00000000","block":`.repeat(20_000));
  const bytes = concatBytes([header, fakes, record]);
  const scan = await jsonlLog.scan(bytes, suite);
  assert.deepEqual(scan.blocks.map((block) => block.hash), [real.hash]);
  assert.deepEqual(
    scan.damaged.map((run) => [run.offset, run.length]),
    [[header.length, fakes.length]],
  );
});
