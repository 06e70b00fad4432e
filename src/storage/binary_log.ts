/**
 * The binary log format (the default): an 8-byte file header, then one framed record per block.
 *
 *   header: "CAIRNB" (6 ASCII bytes) | format version (u16 LE) = 1
 *   record: magic C1 52 45 43 ("\xC1REC") | payload length (u32 LE) | CRC-32C of payload (u32 LE)
 *           | payload = MessagePack [body, signature] (see encodeBlock)
 *
 * The magic starts with 0xC1, a byte MessagePack never uses as a type and UTF-8 never contains,
 * so after damage the scan finds few false starts; any it finds fail the length or checksum test.
 * See docs/storage.md, "Log formats", for the recovery rules.
 */
import {
  blockPayloadLength,
  decodeBlock,
  type SealedBlock,
  writeBlockPayload,
} from "../core/block.ts";
import { CairnError } from "../core/errors.ts";
import type { CryptoSuite } from "../core/signing.ts";
import type { ByteSource } from "./byte_source.ts";
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

export const BINARY_LOG_VERSION = 1;

const FILE_MAGIC = [0x43, 0x41, 0x49, 0x52, 0x4e, 0x42]; // "CAIRNB"
const HEADER_LENGTH = 8;
const RECORD_MAGIC = [0xc1, 0x52, 0x45, 0x43];
/** Magic, length and checksum. */
const FRAME_LENGTH = 12;
const MAX_PAYLOAD = 0xffffffff;
/**
 * After damage, a candidate record at least this long is checksummed through RangeChecksums
 * rather than read: candidates can overlap (see range_checksums.ts), records before damage cannot.
 */
const RANGE_CHECK_FROM = 8192;

const HEADER = (() => {
  const header = new Uint8Array(HEADER_LENGTH);
  header.set(FILE_MAGIC);
  header[6] = BINARY_LOG_VERSION & 0xff;
  header[7] = BINARY_LOG_VERSION >>> 8;
  return header;
})();

export const binaryLog: LogFormat = {
  name: "binary",
  fileExtension: ".log",
  header: () => HEADER.slice(),
  encode: encodeRecords,
  scan: scanBinary,
};

function encodeRecords(blocks: readonly SealedBlock[]): EncodedRecords {
  let total = 0;
  for (const { body, block } of blocks) {
    const length = blockPayloadLength(body, block.signature);
    if (length > MAX_PAYLOAD) {
      throw new CairnError("E_BAD_ARGUMENT", "binary log: a block larger than 4 GiB");
    }
    total += FRAME_LENGTH + length;
  }
  // Payloads are written in place, the body copied once, straight into the frames.
  const out = new Uint8Array(total);
  const view = new DataView(out.buffer);
  let pos = 0;
  let crc = 0; // of everything written so far (0: of nothing)
  for (const { body, block } of blocks) {
    const start = pos + FRAME_LENGTH;
    const end = writeBlockPayload(body, block.signature, out, start);
    const payload = out.subarray(start, end);
    const payloadCrc = crc32c(payload);
    out.set(RECORD_MAGIC, pos);
    view.setUint32(pos + 4, end - start, true);
    view.setUint32(pos + 8, payloadCrc, true);
    crc = crc32cAppend(crc32c(out.subarray(pos, start), crc), payload, payloadCrc);
    pos = end;
  }
  return { bytes: out, crc };
}

async function scanBinary(
  input: Uint8Array | ByteSource,
  suite: CryptoSuite,
  options: ScanOptions = {},
): Promise<LogScan> {
  const file = new ScanWindow(input, options.window);
  const length = file.length;
  await file.hold(0, HEADER_LENGTH);
  if (length < HEADER_LENGTH) {
    const log = new ScanCollector(0);
    if (isTornPrefix(file.view(0, length), HEADER)) log.bad(0, "file header cut short");
    else if (length > 0) throw notALog("binary", "no CAIRNB header");
    return log.finish(length, EMPTY);
  }
  const log = new ScanCollector(HEADER_LENGTH);
  const header = file.view(0, HEADER_LENGTH);
  const version = file.byte(6) | (file.byte(7) << 8);
  const magic = FILE_MAGIC.every((byte, i) => header[i] === byte);
  if (magic && version > BINARY_LOG_VERSION) {
    throw unsupportedVersion("binary", version, BINARY_LOG_VERSION);
  }
  if (!magic || version < 1) {
    // The header a flipped bit damaged is not a reason to refuse every record after it.
    const damaged = isOneByteOff(header, HEADER) &&
      typeof await readFrame(file, HEADER_LENGTH, undefined) === "number";
    if (!damaged) throw notALog("binary", magic ? `format version ${version}` : "no CAIRNB header");
    log.bad(0, DAMAGED_HEADER);
  }

  let pos = HEADER_LENGTH;
  let afterDamage: RangeChecksums | undefined;
  while (pos < length) {
    const frame = await readFrame(file, pos, afterDamage);
    if (typeof frame === "string") {
      log.bad(pos, frame);
      afterDamage ??= new RangeChecksums(file.source, pos);
      pos = await nextMagic(file, pos + 1);
      continue;
    }
    const end = pos + FRAME_LENGTH + frame;
    try {
      const payload = file.view(pos + FRAME_LENGTH, end);
      log.intact(pos, end, await decodeBlock(payload, suite, options.checkCanonical ?? true));
    } catch (err) {
      // Completely written (the checksum holds) but not a block this version reads: damage, and
      // never a torn tail, so that it is not cut away.
      log.intact(pos, end, undefined, `record does not decode: ${reasonOf(err)}`);
    }
    pos = end;
  }
  return log.finish(length, EMPTY);
}

/**
 * The payload length of an intact frame at `pos`, or why there is none. An intact record is then
 * held whole by the window. `afterDamage`, once the scan has met damage, checksums long
 * candidates without reading them whole, so that overlapping ones cost a bounded amount each.
 */
async function readFrame(
  file: ScanWindow,
  pos: number,
  afterDamage: RangeChecksums | undefined,
): Promise<number | string> {
  const left = file.length - pos;
  if (left < FRAME_LENGTH) return "record cut short";
  await file.hold(pos, FRAME_LENGTH);
  for (let i = 0; i < RECORD_MAGIC.length; i++) {
    if (file.byte(pos + i) !== RECORD_MAGIC[i]) return "no record magic";
  }
  const payloadLength = readU32(file.view(pos + 4, pos + 8));
  // Checked against the file before anything is read or allocated, so a hostile length costs
  // nothing; a record larger than the window makes the window grow to hold it.
  if (payloadLength > left - FRAME_LENGTH) return "record length runs past the end of the file";
  const expected = readU32(file.view(pos + 8, pos + 12));
  const start = pos + FRAME_LENGTH;
  const end = start + payloadLength;
  if (afterDamage !== undefined && payloadLength >= RANGE_CHECK_FROM) {
    if (await afterDamage.of(start, end) !== expected) return "record checksum mismatch";
    await file.hold(pos, FRAME_LENGTH + payloadLength);
    return payloadLength;
  }
  await file.hold(pos, FRAME_LENGTH + payloadLength);
  if (crc32c(file.view(start, end)) !== expected) return "record checksum mismatch";
  return payloadLength;
}

/**
 * The next offset from `from` where a record magic starts, or the end of the file. Searches
 * window after window; a magic cut by a window's end is looked at again from its first byte.
 */
async function nextMagic(file: ScanWindow, from: number): Promise<number> {
  const last = file.length - RECORD_MAGIC.length;
  let at = from;
  while (at <= last) {
    await file.hold(at, RECORD_MAGIC.length);
    at = file.indexOf(RECORD_MAGIC[0], at);
    if (at < 0) {
      at = file.end;
      continue;
    }
    if (at > last) break;
    if (at + RECORD_MAGIC.length > file.end) continue; // cut by the window: held from `at` next
    if (
      file.byte(at + 1) === RECORD_MAGIC[1] && file.byte(at + 2) === RECORD_MAGIC[2] &&
      file.byte(at + 3) === RECORD_MAGIC[3]
    ) {
      return at;
    }
    at++;
  }
  return file.length;
}

/** The u32 (little-endian) of four bytes. */
function readU32(bytes: Uint8Array): number {
  return (bytes[0] | (bytes[1] << 8) | (bytes[2] << 16) | (bytes[3] << 24)) >>> 0;
}
