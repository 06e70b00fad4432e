/**
 * Converting a log between the binary and JSONL formats. Lossless: both formats carry each
 * block's canonical body and signature, so binary → JSONL → binary gives the same bytes and every
 * signature still verifies. Damaged records cannot be carried over; they are reported.
 */
import type { CryptoSuite } from "../core/signing.ts";
import { binaryLog } from "./binary_log.ts";
import { jsonlLog } from "./jsonl_log.ts";
import type { LogDamage, LogFormat } from "./log_format.ts";

/** Every log format, by name. */
export const LOG_FORMATS: readonly LogFormat[] = [binaryLog, jsonlLog];

/** The format with this name. */
export function logFormatNamed(name: LogFormat["name"]): LogFormat {
  return LOG_FORMATS.find((format) => format.name === name)!;
}

/** The format a file name's extension stands for (".log" binary, ".jsonl" JSONL), if any. */
export function logFormatForFile(name: string): LogFormat | undefined {
  return LOG_FORMATS.find((format) => name.endsWith(format.fileExtension));
}

export interface ConvertedLog {
  /** The whole new log file: header and one record per block read. */
  readonly bytes: Uint8Array;
  /** Blocks carried over. */
  readonly blocks: number;
  /** What could not be carried over: damaged records and a torn tail, in file order. */
  readonly damaged: LogDamage[];
}

/**
 * Reads the log `bytes` in format `from` and writes it anew in format `to`. Throws what
 * `from.scan` throws for a file that is not such a log (E_NOT_A_LOG, E_UNSUPPORTED_VERSION).
 */
export async function convertLog(
  bytes: Uint8Array,
  from: LogFormat,
  to: LogFormat,
  suite: CryptoSuite,
): Promise<ConvertedLog> {
  const scan = await from.scan(bytes, suite);
  const damaged = [...scan.damaged];
  if (scan.tornTail) {
    damaged.push({ ...scan.tornTail, reason: "torn tail: an incomplete record at the end" });
  }
  const header = to.header();
  const records = to.encode(scan.blocks).bytes;
  const out = new Uint8Array(header.length + records.length);
  out.set(header);
  out.set(records, header.length);
  return { bytes: out, blocks: scan.blocks.length, damaged };
}
