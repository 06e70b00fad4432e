/**
 * `cairndb convert <dir> --to jsonl|binary`: switches a whole database to the other log format —
 * every repository's log and cairn.json's format. Holds the writer lock throughout (E_LOCKED
 * while the database is open elsewhere). Safe against a crash at any point:
 *
 *   1. each new log is written beside the old one atomically (temporary file, fsync, rename);
 *   2. the checkpoints are removed (they name the old log's length and CRC; derived, rebuilt on
 *      the next close);
 *   3. cairn.json is rewritten atomically with the new format: the moment the switch happens;
 *   4. the old logs are removed.
 *
 * Before step 3 the database is still the old format, whole; after it, the new one, whole. A
 * crash leaves at most unused files of the other format: run again, a second run replaces them
 * (before step 3) or removes them (after it). A log that cannot be read stops the run in step 1,
 * naming it, and leaves the same.
 */
import { isCairnError } from "../core/errors.ts";
import {
  type ConvertedLog,
  convertLog,
  LOG_FORMATS,
  logFormatNamed,
} from "../storage/log_convert.ts";
import type { LogFormat } from "../storage/log_format.ts";
import {
  logFileName,
  type LogFormatName,
  SETTINGS_FILE,
  writeSettings,
} from "../storage/settings.ts";
import type { CliIo } from "./io.ts";
import { progress } from "./progress.ts";
import { readStoredDatabase, type StoredDatabase, UnreadableLog } from "./stored_database.ts";
import { type Arguments, directoryArgument, EXIT, UsageError } from "./usage.ts";

export const CONVERT_OPTIONS = ["to"];

export async function convert(io: CliIo, args: Arguments): Promise<number> {
  const directory = directoryArgument(args, "convert");
  const target = args.options.get("to");
  if (target !== "jsonl" && target !== "binary") {
    throw new UsageError("cairndb convert needs --to jsonl or --to binary");
  }
  const db = await readStoredDatabase(directory, { lock: true });
  const lines: string[] = [];
  const bar = progress(io, "convert");
  try {
    const from = db.format;
    const to = logFormatNamed(target as LogFormatName);
    if (from === to) {
      lines.push(`${directory} is in the ${to.name} format already`);
    } else {
      for (const [i, path] of db.repositories.entries()) {
        bar.step(i, db.repositories.length, path);
        lines.push(...await convertRepository(db, path, to));
      }
      for (const path of db.repositories) await db.backend.removeFile(logFileName(path, ".ckpt"));
      await writeSettings(db.backend, { ...db.settings, format: to.name });
      lines.push(`${SETTINGS_FILE}: format ${to.name}`);
    }
    // The old logs; or, when a run stopped after cairn.json was written, what it left.
    const old = LOG_FORMATS.find((format) => format !== to)!;
    const files = new Set(await db.backend.listFiles());
    for (const path of db.repositories) {
      const name = logFileName(path, old.fileExtension);
      if (!files.has(name)) continue;
      await db.backend.removeFile(name);
      if (from === to) lines.push(`removed ${name}, left by a conversion that was interrupted`);
    }
  } finally {
    bar.end();
    await db.backend.close();
  }
  await io.out(`${lines.join("\n")}\n`);
  return EXIT.ok;
}

/** Writes the repository's log in format `to` beside its log; returns what to print. */
async function convertRepository(
  db: StoredDatabase,
  path: string,
  to: LogFormat,
): Promise<string[]> {
  const oldName = logFileName(path, db.format.fileExtension);
  const newName = logFileName(path, to.fileExtension);
  const bytes = (await db.backend.readFile(oldName))!;
  let converted: ConvertedLog;
  try {
    converted = await convertLog(bytes, db.format, to, db.suite);
  } catch (err) {
    if (!isCairnError(err)) throw err;
    throw new UnreadableLog(oldName, err);
  }
  await db.backend.writeFileAtomic(newName, converted.bytes);
  return [
    `${path}: ${oldName} (${bytes.length} B) -> ${newName} (${converted.bytes.length} B), ` +
    `${converted.blocks} blocks`,
    ...converted.damaged.map(({ offset, length, reason }) =>
      `  not carried over: bytes ${offset}..${offset + length} of ${oldName}: ${reason}`
    ),
  ];
}
