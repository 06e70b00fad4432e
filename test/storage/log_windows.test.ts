/**
 * Logs scanned a window at a time (storage/scan_window.ts) read exactly what one whole-file scan
 * reads: the same blocks, damage, torn tail, valid end and errors, whatever the window size, for
 * intact and damaged logs of both formats. Windows here are tiny (1 byte up), so that they end
 * inside frames, records, lines, magics and runs of damage.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { sealBlock, type SealedBlock } from "../../src/core/block.ts";
import { isCairnError } from "../../src/core/errors.ts";
import type { CryptoSuite } from "../../src/core/signing.ts";
import { cryptoSuite } from "../../src/runtime/crypto_suite.ts";
import { binaryLog } from "../../src/storage/binary_log.ts";
import type { ByteSource } from "../../src/storage/byte_source.ts";
import { jsonlLog } from "../../src/storage/jsonl_log.ts";
import { LOG_FORMATS } from "../../src/storage/log_convert.ts";
import type { LogFormat, LogScan } from "../../src/storage/log_format.ts";
import { bigBlockFields, blockFields, newAuthor } from "../harness/blocks.ts";
import { recordSpans } from "../harness/log_records.ts";
import { concatBytes } from "../harness/concat_bytes.ts";

interface Fixture {
  suite: CryptoSuite;
  /** Blocks of a few hundred bytes, signed and trusted, and one of ~6 KB. */
  blocks: SealedBlock[];
}

let fixture: Promise<Fixture> | undefined;

function setup(): Promise<Fixture> {
  fixture ??= (async () => {
    const suite = await cryptoSuite();
    const alice = await newAuthor(suite);
    const bob = await newAuthor(suite);
    const signer = { key: alice.key, ed25519: suite.ed25519 };
    const blocks: SealedBlock[] = [];
    for (const fields of fc.sample(blockFields(alice), { seed: 21, numRuns: 6 })) {
      blocks.push(await sealBlock(fields, signer, suite));
    }
    for (const fields of fc.sample(blockFields(bob), { seed: 22, numRuns: 6 })) {
      blocks.push(await sealBlock(fields, null, suite));
    }
    blocks.push(await sealBlock(bigBlockFields(bob, 450), null, suite));
    return { suite, blocks };
  })();
  return fixture;
}

/**
 * The bytes of a file as a source the way a backend gives them: every read a copy, and every
 * read's length noted.
 */
function fileLike(bytes: Uint8Array): ByteSource & { reads: number[] } {
  const reads: number[] = [];
  return {
    length: bytes.length,
    reads,
    read(offset, length) {
      assert.ok(offset >= 0 && length >= 0 && offset + length <= bytes.length, "read in the file");
      reads.push(length);
      return Promise.resolve(bytes.slice(offset, offset + length));
    },
  };
}

/** Everything a scan says, in plain data, or the error it threw. */
async function outcome(scanning: Promise<LogScan>) {
  try {
    const scan = await scanning;
    return {
      blocks: scan.blocks.map((sealed) => ({ hash: sealed.hash, body: [...sealed.body] })),
      blockOffsets: scan.blockOffsets,
      validEnd: scan.validEnd,
      appendFirst: [...scan.appendFirst],
      damaged: scan.damaged,
      tornTail: scan.tornTail,
    };
  } catch (err) {
    if (!isCairnError(err)) throw err;
    return { error: err.message };
  }
}

/** A record start of each format, for damage that looks like the beginning of a record. */
const RECORD_START: Record<string, Uint8Array[]> = {
  binary: [new Uint8Array([0xc1, 0x52, 0x45, 0x43]), new Uint8Array([0xc1])],
  jsonl: [new TextEncoder().encode(`{"crc":"`), new TextEncoder().encode("\n")],
};

/**
 * Where damage lands: `spot` picks a byte after the file header, `near` a record's first or last
 * byte (a JSONL record's "\n", a binary frame's magic) give or take a few bytes, where a window's
 * end matters most. Header damage is left to log_format.test.ts.
 */
type Where = { spot: number } | { record: number; end: boolean; delta: number };

type Damage =
  | { kind: "flip"; where: Where; mask: number }
  | { kind: "cut"; where: Where }
  | { kind: "remove"; where: Where; length: number }
  | { kind: "insert"; where: Where; bytes: Uint8Array }
  | { kind: "recordStart"; where: Where; which: number; length: number; tail: Uint8Array };

const where: fc.Arbitrary<Where> = fc.oneof(
  fc.record({ spot: fc.nat() }),
  fc.record({
    record: fc.nat(),
    end: fc.boolean(),
    delta: fc.oneof(fc.constant(0), fc.integer({ min: -4, max: 4 })),
  }),
);

const damage: fc.Arbitrary<Damage> = fc.oneof(
  fc.record({ kind: fc.constant("flip" as const), where, mask: fc.integer({ min: 1, max: 255 }) }),
  fc.record({ kind: fc.constant("cut" as const), where }),
  fc.record({
    kind: fc.constant("remove" as const),
    where,
    length: fc.integer({ min: 1, max: 60 }),
  }),
  fc.record({
    kind: fc.constant("insert" as const),
    where,
    bytes: fc.uint8Array({ minLength: 1, maxLength: 40 }),
  }),
  fc.record({
    kind: fc.constant("recordStart" as const),
    where,
    which: fc.integer({ min: 0, max: 1 }),
    // A length that often stays inside the file: checked against the file, not the window.
    length: fc.integer({ min: 0, max: 400 }),
    tail: fc.uint8Array({ minLength: 0, maxLength: 12 }),
  }),
);

/** A file offset after the header for `where`, in a file of `length` bytes. */
function offsetOf(where: Where, spans: [number, number][], header: number, length: number) {
  if ("spot" in where || spans.length === 0) {
    const spot = "spot" in where ? where.spot : 0;
    return header + (spot % (length - header + 1));
  }
  const [start, end] = spans[where.record % spans.length];
  const at = (where.end ? end - 1 : start) + where.delta;
  return Math.max(header, Math.min(length, at));
}

function damaged(
  format: LogFormat,
  bytes: Uint8Array,
  spans: [number, number][],
  hit: Damage,
): Uint8Array {
  const header = format.header().length;
  const at = offsetOf(hit.where, spans, header, bytes.length);
  switch (hit.kind) {
    case "flip": {
      if (at >= bytes.length) return bytes;
      const out = bytes.slice();
      out[at] ^= hit.mask;
      return out;
    }
    case "cut":
      return bytes.slice(0, at);
    case "remove":
      return concatBytes([bytes.subarray(0, at), bytes.subarray(at + hit.length)]);
    case "insert":
      return concatBytes([bytes.subarray(0, at), hit.bytes, bytes.subarray(at)]);
    case "recordStart": {
      const length = new Uint8Array(4);
      new DataView(length.buffer).setUint32(0, hit.length, true);
      const start = RECORD_START[format.name][hit.which];
      return concatBytes([bytes.subarray(0, at), start, length, hit.tail, bytes.subarray(at)]);
    }
  }
}

for (const format of LOG_FORMATS) {
  test(`${format.name} log: scans with any window read what one whole-file scan reads (property)`, async () => {
    const { suite, blocks } = await setup();
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.integer({ min: 0, max: blocks.length - 1 }), { maxLength: 7 }),
        fc.array(damage, { maxLength: 3 }),
        fc.oneof(fc.integer({ min: 1, max: 16 }), fc.integer({ min: 17, max: 700 })),
        fc.boolean(),
        async (picked, hits, window, asSource) => {
          let bytes = concatBytes([
            format.header(),
            format.encode(picked.map((i) => blocks[i])).bytes,
          ]);
          // Spans of the intact log: later damage lands near where records were.
          const spans = recordSpans(format.name, bytes);
          for (const hit of hits) bytes = damaged(format, bytes, spans, hit);
          const whole = await outcome(format.scan(bytes, suite));
          const input = asSource ? fileLike(bytes) : bytes;
          assert.deepEqual(await outcome(format.scan(input, suite, { window })), whole);
        },
      ),
      { numRuns: 300, seed: format.name === "binary" ? 0x5ca1 : 0x5ca2 },
    );
  });

  test(`${format.name} log: a window reads no more than its size, except to hold a larger record`, async () => {
    const { suite, blocks } = await setup();
    const small = blocks.slice(0, 12);
    const bytes = concatBytes([
      format.header(),
      format.encode([...small, blocks[12], ...small]).bytes,
    ]);
    const record = format.encode([blocks[12]]).bytes.length;
    const window = 1024;
    assert.ok(record > 4 * window, `the large record (${record} bytes) outgrows the window`);
    const file = fileLike(bytes);
    const scan = await format.scan(file, suite, { window });
    assert.equal(scan.blocks.length, 25);
    assert.equal(scan.validEnd, bytes.length);
    // A window is read afresh from where the scan stands, never the whole file at once: every
    // read is at most one window, or what the large record needs (JSONL doubles the window
    // while it looks for the end of a line), or a JSONL header's longest line.
    const most = Math.max(window, format.name === "binary" ? record : 2 * record, 4097);
    for (const length of file.reads) assert.ok(length <= most, `read of ${length}: ${file.reads}`);
    assert.ok(file.reads.length >= 8, `read in pieces: ${file.reads}`);
    const total = file.reads.reduce((sum, length) => sum + length, 0);
    assert.ok(total < 3 * bytes.length, `${total} bytes read for ${bytes.length}`);
  });
}

test("binary log: a hostile length inside the file but past the window is damage, read whole", async () => {
  const { suite, blocks } = await setup();
  const header = binaryLog.header();
  const intact = binaryLog.encode(blocks.slice(0, 4)).bytes;
  // A frame claiming most of what follows, with a checksum that cannot hold.
  const frame = new Uint8Array(12);
  frame.set([0xc1, 0x52, 0x45, 0x43]);
  new DataView(frame.buffer).setUint32(4, intact.length - 100, true);
  const bytes = concatBytes([header, frame, intact]);
  const whole = await outcome(binaryLog.scan(bytes, suite));
  assert.deepEqual(
    whole.damaged?.map((d) => [d.offset, d.length, d.reason]),
    [[8, 12, "record checksum mismatch"]],
  );
  assert.equal(whole.blocks?.length, 4);
  for (const window of [1, 12, 13, 64]) {
    assert.deepEqual(await outcome(binaryLog.scan(fileLike(bytes), suite, { window })), whole);
  }
});

test("jsonl log: a first line longer than any header is E_NOT_A_LOG with a window of any size", async () => {
  const { suite } = await setup();
  const long = new TextEncoder().encode(`{"cairn":"log",${" ".repeat(5000)}}\n{}\n`);
  for (const window of [undefined, 1, 100, 4097, 6000]) {
    await assert.rejects(
      jsonlLog.scan(fileLike(long), suite, { window }),
      (err) => isCairnError(err, "E_NOT_A_LOG") && /not a Cairn log header/.test(err.message),
    );
  }
});
