import { test } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { sealBlock, type SealedBlock, verifyBlock } from "../../src/core/block.ts";
import type { Commit } from "../../src/core/commit.ts";
import { type CairnErrorCode, isCairnError } from "../../src/core/errors.ts";
import type { CryptoSuite } from "../../src/core/signing.ts";
import { cryptoSuite } from "../../src/runtime/crypto_suite.ts";
import { binaryLog } from "../../src/storage/binary_log.ts";
import { crc32c } from "../../src/storage/crc32c.ts";
import { jsonlLog } from "../../src/storage/jsonl_log.ts";
import { convertLog, LOG_FORMATS, logFormatForFile } from "../../src/storage/log_convert.ts";
import type { LogFormat, LogScan } from "../../src/storage/log_format.ts";
import { type Author, blockFields, newAuthor } from "../harness/blocks.ts";
import { seededRandom } from "../harness/random.ts";
import { concatBytes } from "../harness/concat_bytes.ts";

interface Fixture {
  suite: CryptoSuite;
  /** Arbitrary blocks, half signed by alice, half written by bob in trusted mode. */
  varied: SealedBlock[];
  /** Small blocks (a few hundred bytes each), for tests that scan a log many times. */
  small: SealedBlock[];
}

let fixture: Promise<Fixture> | undefined;

function setup(): Promise<Fixture> {
  fixture ??= (async () => {
    const suite = await cryptoSuite();
    const alice = await newAuthor(suite);
    const bob = await newAuthor(suite);
    const signer = { key: alice.key, ed25519: suite.ed25519 };
    const varied: SealedBlock[] = [];
    for (const fields of fc.sample(blockFields(alice), { seed: 7, numRuns: 20 })) {
      varied.push(await sealBlock(fields, signer, suite));
    }
    for (const fields of fc.sample(blockFields(bob), { seed: 8, numRuns: 20 })) {
      varied.push(await sealBlock(fields, null, suite));
    }
    // Text beyond ASCII: the JSONL checksum covers UTF-8 bytes, not UTF-16 code units.
    varied.push(await sealBlock(smallFields(alice, 1, "naïve café ☕ 𝄞 日本語"), signer, suite));
    // A record of a few KiB: the log's running checksum combines its CRC instead of rereading it.
    varied.push(await sealBlock(smallFields(bob, 1, "a long text ".repeat(400)), null, suite));
    const small: SealedBlock[] = [];
    for (let seq = 1; seq <= 8; seq++) {
      const author = seq % 2 ? alice : bob;
      const fields = smallFields(author, seq, `item ${seq}`);
      small.push(await sealBlock(fields, author === alice ? signer : null, suite));
    }
    return { suite, varied, small };
  })();
  return fixture;
}

function smallFields(author: Author, seq: number, title: string) {
  const commit: Commit = {
    session: author.session,
    seq,
    key: `k${seq}`,
    hlc: 1_790_000_000_000 * 1024 + seq,
    parents: [],
    schema: "task@1",
    kind: "value",
    value: { title, done: seq % 3 === 0 },
  };
  return {
    session: author.session,
    publicKey: author.key.publicKey,
    seq,
    prev: seq === 1 ? "" : "A".repeat(43),
    commits: [commit],
  };
}

/** A log file of `blocks`, each appended on its own, and where each record starts and ends. */
function buildLog(format: LogFormat, blocks: readonly SealedBlock[]) {
  const parts = [format.header(), ...blocks.map((block) => format.encode([block]).bytes)];
  const bytes = concatBytes(parts);
  const records: { start: number; end: number }[] = [];
  let pos = parts[0].length;
  for (const part of parts.slice(1)) {
    records.push({ start: pos, end: pos + part.length });
    pos += part.length;
  }
  return { bytes, records, headerLength: parts[0].length };
}

const hashes = (blocks: readonly SealedBlock[]) => blocks.map((block) => block.hash);
const text = (bytes: Uint8Array) => new TextDecoder().decode(bytes);
const ascii = (value: string) => new TextEncoder().encode(value);

function hasCode(code: CairnErrorCode): (err: unknown) => boolean {
  return (err) => isCairnError(err, code);
}

function assertIntact(scan: LogScan, blocks: readonly SealedBlock[], end: number): void {
  assert.deepEqual(hashes(scan.blocks), hashes(blocks));
  assert.equal(scan.validEnd, end);
  assert.deepEqual(scan.damaged, []);
  assert.equal(scan.tornTail, undefined);
  assert.equal(scan.appendFirst.length, 0);
}

const OTHER: Record<string, LogFormat> = { binary: jsonlLog, jsonl: binaryLog };

for (const format of LOG_FORMATS) {
  const name = format.name;

  test(`${name} log: round trip of signed and trusted blocks keeps bodies and signatures`, async () => {
    const { suite, varied } = await setup();
    const bytes = concatBytes([format.header(), format.encode(varied).bytes]);
    const scan = await format.scan(bytes, suite);
    assertIntact(scan, varied, bytes.length);
    for (let i = 0; i < varied.length; i++) {
      // sealBlock's body may be a Node Buffer: compare contents.
      assert.deepEqual([...scan.blocks[i].body], [...varied[i].body]);
      assert.deepEqual([...scan.blocks[i].block.signature], [...varied[i].block.signature]);
      assert.deepEqual(scan.blocks[i].block.commits, varied[i].block.commits);
    }
    for (const sealed of scan.blocks.slice(0, 20)) await verifyBlock(sealed, suite);
  });

  test(`${name} log: one encode of many blocks equals one append per block`, async () => {
    const { varied } = await setup();
    const single = concatBytes([format.header(), format.encode(varied).bytes]);
    assert.deepEqual(buildLog(format, varied).bytes, single);
    assert.equal(format.encode([]).bytes.length, 0);
  });

  test(`${name} log: the checksum encode gives is the CRC-32C of its bytes`, async () => {
    const { varied, small } = await setup();
    // Records below and above the size from which checksums are combined instead of reread.
    const sizes = varied.map(({ body }) => body.length);
    assert.ok(Math.min(...sizes) < 2048 && Math.max(...sizes) >= 2048, `sizes ${sizes}`);
    for (const blocks of [varied, small, varied.slice(3, 9), [varied[0]], []]) {
      const { bytes, crc } = format.encode(blocks);
      assert.equal(crc, crc32c(bytes));
    }
  });

  test(`${name} log: an empty file and a header alone are empty logs`, async () => {
    const { suite } = await setup();
    assertIntact(await format.scan(new Uint8Array(0), suite), [], 0);
    const header = format.header();
    assertIntact(await format.scan(header, suite), [], header.length);
  });

  test(`${name} log: a header cut short is a torn tail at 0 (write the header again)`, async () => {
    const { suite } = await setup();
    const header = format.header();
    for (let cut = 1; cut < header.length; cut++) {
      const scan = await format.scan(header.subarray(0, cut), suite);
      assert.deepEqual(scan.blocks, []);
      assert.equal(scan.validEnd, 0);
      assert.deepEqual(scan.tornTail, { offset: 0, length: cut });
    }
  });

  test(`${name} log: a cut at every byte of the last records keeps the intact prefix`, async () => {
    const { suite, small } = await setup();
    const blocks = small.slice(0, 5);
    const { bytes, records } = buildLog(format, blocks);
    const firstCut = records[records.length - 2].start;
    for (let cut = firstCut; cut < bytes.length; cut++) {
      const k = records.findIndex((record) => cut >= record.start && cut < record.end);
      const { start, end } = records[k];
      const scan = await format.scan(bytes.slice(0, cut), suite);
      const where = `cut at ${cut} in record ${k} [${start}, ${end})`;
      if (cut === start) {
        assertIntact(scan, blocks.slice(0, k), cut);
      } else if (name === "jsonl" && cut === end - 1) {
        // Everything but the final "\n": the record is kept and the writer adds the "\n".
        assert.deepEqual(hashes(scan.blocks), hashes(blocks.slice(0, k + 1)), where);
        assert.equal(scan.validEnd, cut, where);
        assert.equal(scan.tornTail, undefined, where);
        assert.equal(text(scan.appendFirst), "\n", where);
      } else {
        assert.deepEqual(hashes(scan.blocks), hashes(blocks.slice(0, k)), where);
        assert.equal(scan.validEnd, start, where);
        assert.deepEqual(scan.tornTail, { offset: start, length: cut - start }, where);
        assert.deepEqual(scan.damaged, [], where);
        assert.equal(scan.appendFirst.length, 0, where);
      }
      // What a writer does next: cut to validEnd, append appendFirst, then the remaining blocks.
      const kept = scan.blocks.length;
      const repaired = concatBytes([
        bytes.subarray(0, scan.validEnd),
        scan.appendFirst,
        format.encode(blocks.slice(kept)).bytes,
      ]);
      const reread = await format.scan(repaired, suite);
      assertIntact(reread, blocks, repaired.length);
    }
  });

  test(`${name} log: flipped bytes lose only the damaged records, reported (300 seeded cases)`, async () => {
    const { suite, small } = await setup();
    const { bytes, records, headerLength } = buildLog(format, small);
    const seed = 0x10f + name.length;
    const random = seededRandom(seed);
    for (let run = 0; run < 300; run++) {
      const damagedBytes = bytes.slice();
      const flips = 1 + Math.floor(random() * 3);
      const hit = new Set<number>();
      for (let f = 0; f < flips; f++) {
        const at = headerLength + Math.floor(random() * (bytes.length - headerLength));
        damagedBytes[at] ^= 1 + Math.floor(random() * 255);
        hit.add(records.findIndex((record) => at >= record.start && at < record.end));
      }
      const where = `seed ${seed}, run ${run}, records hit ${[...hit].sort()}`;
      let scan: LogScan;
      try {
        scan = await format.scan(damagedBytes, suite);
      } catch (err) {
        assert.fail(`${where}: scan threw ${err}`);
      }
      // Expected: every record not hit is kept; each run of adjacent hit records is one damaged
      // region, or the torn tail when it reaches the end of the file.
      const expectedDamage: { offset: number; length: number }[] = [];
      let expectedTorn: { offset: number; length: number } | undefined;
      for (let k = 0; k < records.length; k++) {
        if (!hit.has(k) || hit.has(k - 1)) continue;
        let last = k;
        while (hit.has(last + 1)) last++;
        const region = { offset: records[k].start, length: records[last].end - records[k].start };
        if (last < records.length - 1) expectedDamage.push(region);
        else if (name === "binary") expectedTorn = region;
        else {
          // JSONL: lines that kept their "\n" were written whole, and are damage; only what
          // follows the last "\n" (a flip hit it) can be a torn tail.
          const wholeEnd = damagedBytes.lastIndexOf(0x0a) + 1;
          const end = region.offset + region.length;
          if (wholeEnd > region.offset) {
            expectedDamage.push({ offset: region.offset, length: wholeEnd - region.offset });
          }
          const tornFrom = Math.max(wholeEnd, region.offset);
          if (tornFrom < end) expectedTorn = { offset: tornFrom, length: end - tornFrom };
        }
      }
      assert.deepEqual(
        hashes(scan.blocks),
        hashes(small.filter((_, k) => !hit.has(k))),
        where,
      );
      assert.deepEqual(
        scan.damaged.map(({ offset, length }) => ({ offset, length })),
        expectedDamage,
        where,
      );
      assert.deepEqual(scan.tornTail, expectedTorn, where);
      assert.equal(scan.validEnd, expectedTorn ? expectedTorn.offset : bytes.length, where);
      for (const damage of scan.damaged) assert.ok(damage.reason.length > 0, where);
    }
  });

  test(`${name} log: random bytes are not a log; garbage after a header never throws`, async () => {
    const { suite } = await setup();
    const seed = 0xbad + name.length;
    const random = seededRandom(seed);
    const header = format.header();
    for (let run = 0; run < 200; run++) {
      const garbage = Uint8Array.from(
        { length: 1 + Math.floor(random() * 200) },
        () => Math.floor(random() * 256),
      );
      const where = `seed ${seed}, run ${run}`;
      try {
        const scan = await format.scan(garbage, suite);
        // Only a torn header can be read as a log: it is then empty.
        assert.deepEqual(scan.blocks, [], where);
        assert.equal(scan.validEnd, 0, where);
      } catch (err) {
        assert.ok(isCairnError(err, "E_NOT_A_LOG"), `${where}: ${err}`);
      }
      const afterHeader = await format.scan(concatBytes([header, garbage]), suite);
      assert.deepEqual(afterHeader.blocks, [], where);
      // JSONL: garbage lines ended by a "\n" are damage, kept; what follows the last is torn.
      const whole = name === "jsonl" ? garbage.lastIndexOf(0x0a) + 1 : 0;
      const end = header.length + garbage.length;
      assert.equal(afterHeader.validEnd, header.length + whole, where);
      assert.deepEqual(
        afterHeader.damaged.map(({ offset, length }) => [offset, length]),
        whole > 0 ? [[header.length, whole]] : [],
        where,
      );
      assert.deepEqual(
        afterHeader.tornTail,
        whole < garbage.length
          ? { offset: header.length + whole, length: end - header.length - whole }
          : undefined,
        where,
      );
    }
  });

  test(`${name} log: a header with one byte changed is damage, the records after it read; more, or nothing after, is E_NOT_A_LOG`, async () => {
    const { suite, small } = await setup();
    const header = format.header();
    const records = format.encode(small).bytes;
    // Every byte of the header, each bit: a flip refused every record after it before.
    for (let at = 0; at < header.length - (name === "jsonl" ? 1 : 0); at++) {
      for (let bit = 0; bit < 8; bit++) {
        const damaged = header.slice();
        damaged[at] ^= 1 << bit;
        if (name === "jsonl" && damaged[at] === 0x0a) continue; // a new line break: other lines
        const where = `byte ${at}, bit ${bit}`;
        let scan: LogScan;
        try {
          scan = await format.scan(concatBytes([damaged, records]), suite);
        } catch (err) {
          // Unless it reads as a header of a newer version: that one is never taken for this.
          assert.ok(isCairnError(err, "E_UNSUPPORTED_VERSION"), `${where}: ${err}`);
          continue;
        }
        assert.deepEqual(hashes(scan.blocks), hashes(small), where);
        if (scan.damaged.length === 0) continue; // still a header (JSON key order, spaces)
        assert.deepEqual(scan.damaged.map((d) => d.offset), [0], where);
        assert.match(scan.damaged[0].reason, /header damaged/, where);
      }
    }
    const twice = header.slice();
    twice[1] ^= 1;
    twice[2] ^= 1;
    await assert.rejects(format.scan(concatBytes([twice, records]), suite), hasCode("E_NOT_A_LOG"));
    const once = header.slice();
    once[1] ^= 1;
    await assert.rejects(format.scan(once, suite), hasCode("E_NOT_A_LOG"), "no record to vouch");
    const garbage = new Uint8Array(records.length).fill(0x41);
    await assert.rejects(format.scan(concatBytes([once, garbage]), suite), hasCode("E_NOT_A_LOG"));
  });

  test(`${name} log: a log of the other format is E_NOT_A_LOG`, async () => {
    const { suite, small } = await setup();
    const other = OTHER[name];
    await assert.rejects(format.scan(other.header(), suite), hasCode("E_NOT_A_LOG"));
    const otherLog = concatBytes([other.header(), other.encode(small).bytes]);
    await assert.rejects(format.scan(otherLog, suite), hasCode("E_NOT_A_LOG"));
    await assert.rejects(format.scan(other.encode(small).bytes, suite), hasCode("E_NOT_A_LOG"));
  });

  test(`${name} log: converted to the other format and back gives the same bytes`, async () => {
    const { suite, varied } = await setup();
    const other = OTHER[name];
    const original = concatBytes([format.header(), format.encode(varied).bytes]);
    const there = await convertLog(original, format, other, suite);
    assert.equal(there.blocks, varied.length);
    assert.deepEqual(there.damaged, []);
    assertIntact(await other.scan(there.bytes, suite), varied, there.bytes.length);
    const back = await convertLog(there.bytes, other, format, suite);
    assert.deepEqual(back.bytes, original);
    const scan = await format.scan(back.bytes, suite);
    for (const sealed of scan.blocks) {
      if (sealed.block.signature.length > 0) await verifyBlock(sealed, suite);
    }
    assert.equal(scan.blocks.filter((b) => b.block.signature.length > 0).length, 21);
  });
}

test("binary log: header is CAIRNB + u16 LE version 1; records are magic | len | crc | payload", async () => {
  const { small } = await setup();
  assert.deepEqual([...binaryLog.header()], [...ascii("CAIRNB"), 1, 0]);
  const record = binaryLog.encode([small[0]]).bytes;
  const view = new DataView(record.buffer, record.byteOffset);
  assert.deepEqual([...record.subarray(0, 4)], [0xc1, 0x52, 0x45, 0x43]);
  const payload = record.subarray(12);
  assert.equal(view.getUint32(4, true), payload.length);
  assert.equal(view.getUint32(8, true), crc32c(payload));
});

test("binary log: a newer version is E_UNSUPPORTED_VERSION, version 0 is damage or E_NOT_A_LOG", async () => {
  const { suite, small } = await setup();
  const newer = concatBytes([binaryLog.header(), binaryLog.encode(small).bytes]);
  newer[6] = 2;
  await assert.rejects(binaryLog.scan(newer, suite), hasCode("E_UNSUPPORTED_VERSION"));
  newer[6] = 0; // one byte off this version's header, and records after it: damage
  assert.equal((await binaryLog.scan(newer, suite)).damaged[0]?.offset, 0);
  newer[7] = 1; // version 256: another byte off
  await assert.rejects(binaryLog.scan(newer, suite), hasCode("E_UNSUPPORTED_VERSION"));
  newer[6] = 0;
  newer[7] = 0;
  newer[0] ^= 1; // version 0 and a damaged magic: two bytes off
  await assert.rejects(binaryLog.scan(newer, suite), hasCode("E_NOT_A_LOG"));
});

/** A binary record with a valid frame around any payload. */
function rawRecord(payload: Uint8Array, length = payload.length): Uint8Array {
  const out = new Uint8Array(12 + payload.length);
  const view = new DataView(out.buffer);
  out.set([0xc1, 0x52, 0x45, 0x43]);
  view.setUint32(4, length, true);
  view.setUint32(8, crc32c(payload), true);
  out.set(payload, 12);
  return out;
}

test("binary log: a hostile length is damage or a torn tail, never a huge allocation", async () => {
  const { suite, small } = await setup();
  const header = binaryLog.header();
  const hostile = rawRecord(new Uint8Array([1, 2, 3]), 0xffffffff);
  const intact = binaryLog.encode(small.slice(0, 2)).bytes;
  const middle = await binaryLog.scan(concatBytes([header, hostile, intact]), suite);
  assert.deepEqual(hashes(middle.blocks), hashes(small.slice(0, 2)));
  assert.deepEqual(middle.damaged.map((d) => [d.offset, d.length]), [[8, hostile.length]]);
  assert.match(middle.damaged[0].reason, /past the end/);
  const end = await binaryLog.scan(concatBytes([header, intact, hostile]), suite);
  assert.deepEqual(hashes(end.blocks), hashes(small.slice(0, 2)));
  assert.deepEqual(end.tornTail, { offset: 8 + intact.length, length: hostile.length });
});

test("binary log: a record whose checksum holds but whose block does not decode is damage", async () => {
  const { suite, small } = await setup();
  const header = binaryLog.header();
  const undecodable = rawRecord(ascii("not a block"));
  const before = binaryLog.encode([small[0]]).bytes;
  const after = binaryLog.encode([small[1]]).bytes;
  const bytes = concatBytes([header, before, undecodable, after]);
  const scan = await binaryLog.scan(bytes, suite);
  assert.deepEqual(hashes(scan.blocks), hashes(small.slice(0, 2)));
  assert.equal(scan.damaged.length, 1);
  assert.equal(scan.damaged[0].offset, 8 + before.length);
  assert.equal(scan.damaged[0].length, undecodable.length);
  assert.match(scan.damaged[0].reason, /does not decode/);
  // At the end it was still completely written: reported as damage and not cut away.
  const atEnd = await binaryLog.scan(concatBytes([header, before, undecodable]), suite);
  assert.equal(atEnd.tornTail, undefined);
  assert.equal(atEnd.damaged.length, 1);
  assert.equal(atEnd.validEnd, 8 + before.length + undecodable.length);
});

test("jsonl log: every line is JSON a person can read; crc covers the block text", async () => {
  const { small } = await setup();
  const lines = text(concatBytes([jsonlLog.header(), jsonlLog.encode(small).bytes])).split("\n");
  assert.equal(lines.pop(), "");
  assert.equal(lines[0], `{"cairn":"log","format":"jsonl","version":1}`);
  for (const [i, line] of lines.slice(1).entries()) {
    const parsed = JSON.parse(line);
    assert.match(parsed.crc, /^[0-9a-f]{8}$/);
    assert.equal(parsed.block.session, small[i].block.session);
    const blockText = JSON.stringify(parsed.block);
    assert.equal(line, `{"crc":"${parsed.crc}","block":${blockText}}`);
    assert.equal(parseInt(parsed.crc, 16), crc32c(ascii(blockText)));
  }
});

test("jsonl log: a newer version is E_UNSUPPORTED_VERSION; other headers are E_NOT_A_LOG", async () => {
  const { suite, small } = await setup();
  const records = jsonlLog.encode(small).bytes;
  const withHeader = (line: string) => concatBytes([ascii(line), records]);
  await assert.rejects(
    jsonlLog.scan(withHeader(`{"cairn":"log","format":"jsonl","version":2,"extra":true}\n`), suite),
    hasCode("E_UNSUPPORTED_VERSION"),
  );
  await assert.rejects(
    jsonlLog.scan(ascii(`{"cairn":"log","format":"jsonl","version":3}`), suite),
    hasCode("E_UNSUPPORTED_VERSION"),
  );
  for (
    const header of [
      `{"cairn":"log","format":"binary","version":1}\n`,
      `{"cairn":"checkpoint","format":"jsonl","version":1}\n`,
      `{"cairn":"log","format":"jsonl","version":0,"x":1}\n`,
      `{"cairn":"log","format":"jsonl"}\n`,
      `[1,2,3]\n`,
      `{"cairn":\n`,
      `\n`,
    ]
  ) {
    await assert.rejects(jsonlLog.scan(withHeader(header), suite), hasCode("E_NOT_A_LOG"), header);
  }
  // The same header written with other key order (say, by jq) is still a header.
  const reordered = await jsonlLog.scan(
    withHeader(`{"version":1,"format":"jsonl","cairn":"log"}\n`),
    suite,
  );
  assert.deepEqual(hashes(reordered.blocks), hashes(small));
});

test("jsonl log: a line whose crc holds but whose block does not decode is damage", async () => {
  const { suite, small } = await setup();
  const blockText = `{"v":1,"session":"nope"}`;
  const crc = crc32c(ascii(blockText)).toString(16).padStart(8, "0");
  const bad = ascii(`{"crc":"${crc}","block":${blockText}}\n`);
  const header = jsonlLog.header();
  const before = jsonlLog.encode([small[0]]).bytes;
  const scan = await jsonlLog.scan(
    concatBytes([header, before, bad, jsonlLog.encode([small[1]]).bytes]),
    suite,
  );
  assert.deepEqual(hashes(scan.blocks), hashes(small.slice(0, 2)));
  assert.deepEqual(scan.damaged.map((d) => [d.offset, d.length]), [[
    header.length + before.length,
    bad.length,
  ]]);
  assert.match(scan.damaged[0].reason, /does not decode/);
});

test("jsonl log: a lost newline merges two lines; the second record is still found", async () => {
  const { suite, small } = await setup();
  const { bytes, records } = buildLog(jsonlLog, small.slice(0, 3));
  const merged = bytes.slice();
  merged[records[0].end - 1] = 0x20; // the first record's "\n" becomes a space
  const scan = await jsonlLog.scan(merged, suite);
  assert.deepEqual(hashes(scan.blocks), hashes(small.slice(1, 3)));
  assert.deepEqual(scan.damaged.map((d) => [d.offset, d.length]), [[
    records[0].start,
    records[0].end - records[0].start,
  ]]);
});

test("jsonl log: a log whose line breaks became \\r\\n (git autocrlf, an editor) reads whole, and grows", async () => {
  const { suite, small } = await setup();
  const { bytes } = buildLog(jsonlLog, small.slice(0, 5));
  const converted = ascii(text(bytes).replaceAll("\n", "\r\n"));
  assertIntact(await jsonlLog.scan(converted, suite), small.slice(0, 5), converted.length);
  // The writer appends after it with "\n" alone; both kinds of line read.
  const grown = concatBytes([converted, jsonlLog.encode(small.slice(5)).bytes]);
  assertIntact(await jsonlLog.scan(grown, suite), small, grown.length);
  // Cut inside its last "\r\n": the record is whole, and the writer adds the "\n".
  const cut = await jsonlLog.scan(converted.subarray(0, converted.length - 1), suite);
  assert.deepEqual(hashes(cut.blocks), hashes(small.slice(0, 5)));
  assert.equal(cut.tornTail, undefined);
  assert.equal(text(cut.appendFirst), "\n");
});

test("jsonl log: a whole last line that does not check out is damage, kept; not a torn tail", async () => {
  const { suite, small } = await setup();
  const { bytes, records } = buildLog(jsonlLog, small.slice(0, 4));
  const last = records[3];
  const edited = bytes.slice();
  edited[last.start + Math.floor((last.end - last.start) / 2)] ^= 0x01; // an edit by hand
  const scan = await jsonlLog.scan(edited, suite);
  assert.deepEqual(hashes(scan.blocks), hashes(small.slice(0, 3)));
  assert.deepEqual(scan.damaged.map((d) => [d.offset, d.length]), [[
    last.start,
    last.end - last.start,
  ]]);
  assert.equal(scan.tornTail, undefined);
  assert.equal(scan.validEnd, edited.length, "the writer appends after it, cutting nothing");
  // Whole bad lines, then an append cut short: the whole ones are damage, the rest the tail.
  const torn = concatBytes([edited, jsonlLog.encode([small[4]]).bytes.subarray(0, 20)]);
  const tornScan = await jsonlLog.scan(torn, suite);
  assert.deepEqual(tornScan.damaged.map((d) => [d.offset, d.length]), [[
    last.start,
    last.end - last.start,
  ]]);
  assert.deepEqual(tornScan.tornTail, { offset: edited.length, length: 20 });
  assert.equal(tornScan.validEnd, edited.length);
});

test("convertLog reports damage and the torn tail; formats come from file extensions", async () => {
  const { suite, small } = await setup();
  const { bytes, records } = buildLog(binaryLog, small.slice(0, 4));
  const damaged = bytes.slice(0, bytes.length - 5);
  damaged[records[1].start + 20] ^= 0xff;
  const converted = await convertLog(damaged, binaryLog, jsonlLog, suite);
  assert.equal(converted.blocks, 2);
  assert.deepEqual(converted.damaged.map((d) => d.offset), [records[1].start, records[3].start]);
  assert.match(converted.damaged[1].reason, /torn/);
  const scan = await jsonlLog.scan(converted.bytes, suite);
  assert.deepEqual(hashes(scan.blocks), hashes([small[0], small[2]]));
  await assert.rejects(
    convertLog(ascii("hello"), binaryLog, jsonlLog, suite),
    hasCode("E_NOT_A_LOG"),
  );

  assert.equal(logFormatForFile("repo.log"), binaryLog);
  assert.equal(logFormatForFile("/tmp/a.b/repo.jsonl"), jsonlLog);
  assert.equal(logFormatForFile("repo.json"), undefined);
});
