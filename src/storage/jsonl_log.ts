/**
 * The JSONL log format: readable with `cat`, `grep` and `jq`. A header line, then one line per
 * block:
 *
 *   {"cairn":"log","format":"jsonl","version":1}\n
 *   {"crc":"<8 lowercase hex digits>","block":<blockToJson(sealed) as JSON>}\n
 *
 * `crc` is the CRC-32C of the UTF-8 bytes of the block's JSON text exactly as written (everything
 * between `"block":` and the line's closing `}`), so a record is checked before it is parsed.
 * Lines are written in exactly this shape; a line of any other shape is damage.
 * See docs/storage.md, "Log formats", for the recovery rules.
 */
import { blockFromJson, blockToJson, type SealedBlock } from "../core/block.ts";
import { isCairnError } from "../core/errors.ts";
import type { CryptoSuite } from "../core/signing.ts";
import { isPlainObject } from "../core/wire_validation.ts";
import { type ByteSource, bytesSource } from "./byte_source.ts";
import { crc32c, crc32cAppend } from "./crc32c.ts";
import {
  DAMAGED_HEADER,
  EMPTY,
  type EncodedRecords,
  isOneByteOff,
  isTornPrefix,
  type LogFormat,
  type LogScan,
  notALog,
  reasonOf,
  ScanCollector,
  type ScanOptions,
  unsupportedVersion,
} from "./log_format.ts";
import { RangeChecksums } from "./range_checksums.ts";
import { ScanWindow } from "./scan_window.ts";

export const JSONL_LOG_VERSION = 1;

const encoder = new TextEncoder();
const decoder = new TextDecoder("utf-8", { fatal: true });

const NEWLINE = 0x0a;
const CARRIAGE_RETURN = 0x0d;
const HEADER = encoder.encode(
  `${JSON.stringify({ cairn: "log", format: "jsonl", version: JSONL_LOG_VERSION })}\n`,
);
/** A header line longer than this is not a header (spares parsing a huge binary "line"). */
const MAX_HEADER_LINE = 4096;
const PREFIX_HEAD = encoder.encode(`{"crc":"`);
const PREFIX_TAIL = encoder.encode(`","block":`);
const CRC_DIGITS = 8;
/** Offset of the block JSON text in a record line. */
const TEXT_START = PREFIX_HEAD.length + CRC_DIGITS + PREFIX_TAIL.length;
const CLOSE = 0x7d; // "}"
const HEX = encoder.encode("0123456789abcdef");
const LINE_BREAK = encoder.encode("\n");

export const jsonlLog: LogFormat = {
  name: "jsonl",
  fileExtension: ".jsonl",
  header: () => HEADER.slice(),
  encode: encodeLines,
  scan: scanJsonl,
};

function encodeLines(blocks: readonly SealedBlock[]): EncodedRecords {
  // One string, one UTF-8 encoding; the checksums are then written over the zero placeholders.
  // Block JSON never holds a raw newline (JSON.stringify escapes it), so lines are found by "\n".
  let text = "";
  for (const sealed of blocks) {
    text += `{"crc":"00000000","block":${JSON.stringify(blockToJson(sealed))}}\n`;
  }
  const out = encoder.encode(text);
  let pos = 0;
  let crc = 0; // of everything written so far (0: of nothing)
  while (pos < out.length) {
    const end = out.indexOf(NEWLINE, pos);
    const textStart = pos + TEXT_START;
    const blockText = out.subarray(textStart, end - 1);
    const textCrc = crc32c(blockText);
    for (let i = CRC_DIGITS - 1, rest = textCrc; i >= 0; i--, rest >>>= 4) {
      out[pos + PREFIX_HEAD.length + i] = HEX[rest & 0xf];
    }
    // The line: its prefix (now with the checksum), the block text, then "}" and the newline.
    crc = crc32cAppend(crc32c(out.subarray(pos, textStart), crc), blockText, textCrc);
    crc = crc32c(out.subarray(end - 1, end + 1), crc);
    pos = end + 1;
  }
  return { bytes: out, crc };
}

async function scanJsonl(
  input: Uint8Array | ByteSource,
  suite: CryptoSuite,
  options: ScanOptions = {},
): Promise<LogScan> {
  const file = new ScanWindow(input, options.window);
  const length = file.length;
  // A header is at most MAX_HEADER_LINE bytes and its "\n": look no further for the first line.
  await file.hold(0, MAX_HEADER_LINE + 1);
  const firstBreak = file.indexOf(NEWLINE, 0);
  const headerEnd = firstBreak < 0 ? file.end : firstBreak;
  if (firstBreak < 0 && headerEnd === length) {
    if (length === 0 || isTornPrefix(file.view(0, length), HEADER)) {
      const log = new ScanCollector(0);
      if (length > 0) log.bad(0, "header line cut short");
      return log.finish(length, EMPTY);
    }
  }
  const log = new ScanCollector(firstBreak + 1);
  try {
    // (A first line longer than MAX_HEADER_LINE fails here, whether its "\n" was seen or not.)
    checkHeader(file.view(0, headerEnd));
  } catch (err) {
    // The header a flipped bit damaged is not a reason to refuse every record after it.
    if (!isCairnError(err, "E_NOT_A_LOG") || !await damagedHeader(file, firstBreak, suite)) {
      throw err;
    }
    log.bad(0, DAMAGED_HEADER);
  }
  if (firstBreak < 0) return new ScanCollector(length).finish(length, LINE_BREAK);

  let pos = firstBreak + 1;
  let unterminated = false;
  while (pos < length) {
    // The window then holds the whole line: lines are read whole, however long.
    const lineBreak = await file.find(NEWLINE, pos);
    const lineEnd = lineBreak < 0 ? length : lineBreak;
    const next = lineBreak < 0 ? length : lineBreak + 1;
    const lineBytes = withoutCarriageReturn(file.view(pos, lineEnd));
    const line = await readLine(lineBytes, 0, lineBytes.length, suite);
    if (typeof line === "string") {
      // A line that lost its "\n" is merged with the next: look for a record starting inside it.
      const found = await recordInside(lineBytes, 1, lineBytes.length, suite);
      log.bad(pos, line);
      if (found) log.intact(pos + found.start, next, found.block, found.reason);
    } else {
      log.intact(pos, next, line.block, line.reason);
    }
    unterminated = lineBreak < 0;
    if (!unterminated) log.whole(next);
    pos = next;
  }
  // The last record checks out but its "\n" is missing: keep it, and have the writer add the "\n".
  return log.finish(length, unterminated ? LINE_BREAK : EMPTY);
}

/** Whether the first line is this version's header with one byte changed, a record after it. */
async function damagedHeader(
  file: ScanWindow,
  firstBreak: number,
  suite: CryptoSuite,
): Promise<boolean> {
  if (firstBreak < 0 || !isOneByteOff(file.view(0, firstBreak + 1), HEADER)) return false;
  const lineBreak = await file.find(NEWLINE, firstBreak + 1);
  const line = withoutCarriageReturn(
    file.view(firstBreak + 1, lineBreak < 0 ? file.length : lineBreak),
  );
  return typeof await readLine(line, 0, line.length, suite) !== "string";
}

/**
 * A line without the "\r" of a "\r\n" line break. Cairn writes "\n" alone, but a log that git
 * (core.autocrlf) or a Windows editor converted holds every record whole, and read as damage
 * they were all cut off as a torn tail at the next open.
 */
function withoutCarriageReturn(line: Uint8Array): Uint8Array {
  return line.length > 0 && line[line.length - 1] === CARRIAGE_RETURN
    ? line.subarray(0, line.length - 1)
    : line;
}

function checkHeader(line: Uint8Array): void {
  if (line.length === 0 || line[0] !== 0x7b || line.length > MAX_HEADER_LINE) {
    throw notALog("jsonl", "the first line is not a Cairn log header");
  }
  let header: unknown;
  try {
    header = JSON.parse(decoder.decode(line));
  } catch {
    throw notALog("jsonl", "the first line is not JSON");
  }
  if (!isPlainObject(header) || header.cairn !== "log" || header.format !== "jsonl") {
    throw notALog("jsonl", "the first line is not a Cairn JSONL log header");
  }
  const version = header.version;
  if (typeof version !== "number" || !Number.isInteger(version) || version < 1) {
    throw notALog("jsonl", `header version ${JSON.stringify(version)}`);
  }
  if (version > JSONL_LOG_VERSION) throw unsupportedVersion("jsonl", version, JSONL_LOG_VERSION);
}

interface LineRecord {
  /** Undefined when the line checks out but its block does not decode (damage, not torn). */
  block: SealedBlock | undefined;
  reason: string;
}

/** The CRC-32C of `bytes[from, to)`. */
type ChecksumOf = (from: number, to: number) => number | Promise<number>;

/**
 * The record line `bytes[start, end)` (without its "\n"), or why it is not one. `checksumOf`
 * checksums the block text (by default: reads it).
 */
async function readLine(
  bytes: Uint8Array,
  start: number,
  end: number,
  suite: CryptoSuite,
  checksumOf: ChecksumOf = (from, to) => crc32c(bytes.subarray(from, to)),
): Promise<LineRecord | string> {
  if (end - start < TEXT_START + 3) return "not a record line";
  if (!startsWith(bytes, start, PREFIX_HEAD)) return "not a record line";
  let expected = 0;
  for (let i = 0; i < CRC_DIGITS; i++) {
    const digit = hexValue(bytes[start + PREFIX_HEAD.length + i]);
    if (digit < 0) return "not a record line";
    expected = expected * 16 + digit;
  }
  if (!startsWith(bytes, start + PREFIX_HEAD.length + CRC_DIGITS, PREFIX_TAIL)) {
    return "not a record line";
  }
  if (bytes[end - 1] !== CLOSE) return "record line cut short";
  if (await checksumOf(start + TEXT_START, end - 1) !== expected) {
    return "record checksum mismatch";
  }
  const text = bytes.subarray(start + TEXT_START, end - 1);
  try {
    return { block: await blockFromJson(JSON.parse(decoder.decode(text)), suite), reason: "" };
  } catch (err) {
    return { block: undefined, reason: `record does not decode: ${reasonOf(err)}` };
  }
}

/**
 * The first record that starts in `[from, end)` and runs to `end`, if any checks out. A crafted
 * line can hold a candidate every few bytes, all running to `end`: RangeChecksums checksums each
 * for a bounded cost, where reading each afresh would be quadratic in the line's length.
 */
async function recordInside(
  bytes: Uint8Array,
  from: number,
  end: number,
  suite: CryptoSuite,
): Promise<(LineRecord & { start: number }) | undefined> {
  const checksums = new RangeChecksums(bytesSource(bytes), from);
  const checksumOf = (textFrom: number, textTo: number) => checksums.of(textFrom, textTo);
  for (let at = bytes.indexOf(PREFIX_HEAD[0], from); at >= 0 && at < end;) {
    if (startsWith(bytes, at, PREFIX_HEAD)) {
      const line = await readLine(bytes, at, end, suite, checksumOf);
      if (typeof line !== "string") return { ...line, start: at };
    }
    at = bytes.indexOf(PREFIX_HEAD[0], at + 1);
  }
  return undefined;
}

function startsWith(bytes: Uint8Array, at: number, prefix: Uint8Array): boolean {
  if (at + prefix.length > bytes.length) return false;
  for (let i = 0; i < prefix.length; i++) if (bytes[at + i] !== prefix[i]) return false;
  return true;
}

/** The value of a lowercase hex digit, or -1. */
function hexValue(byte: number): number {
  if (byte >= 0x30 && byte <= 0x39) return byte - 0x30;
  if (byte >= 0x61 && byte <= 0x66) return byte - 0x61 + 10;
  return -1;
}
