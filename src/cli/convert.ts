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
 * Before step 3 the database is still the old format, whole; after it, the new one, whole; a
 * crash leaves at most unused files of the other format, which a second run replaces or removes.
 */
import { convertLog, logFormatNamed } from "../storage/log_convert.ts";
import {
  logFileName,
  type LogFormatName,
  SETTINGS_FILE,
  writeSettings,
} from "../storage/settings.ts";
import type { CliIo } from "./io.ts";
import { progress } from "./progress.ts";
import { readStoredDatabase } from "./stored_database.ts";
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
      lines.push(`${directory} is in the ${to.name} format already: nothing to do`);
    } else {
      for (const [i, path] of db.repositories.entries()) {
        bar.step(i, db.repositories.length, path);
        const oldName = logFileName(path, from.fileExtension);
        const newName = logFileName(path, to.fileExtension);
        const bytes = (await db.backend.readFile(oldName))!;
        const converted = await convertLog(bytes, from, to, db.suite);
        await db.backend.writeFileAtomic(newName, converted.bytes);
        lines.push(
          `${path}: ${oldName} (${bytes.length} B) -> ${newName} (${converted.bytes.length} B), ` +
            `${converted.blocks} blocks`,
        );
        for (const { offset, length, reason } of converted.damaged) {
          lines.push(
            `  not carried over: bytes ${offset}..${offset + length} of ${oldName}: ${reason}`,
          );
        }
      }
      for (const path of db.repositories) await db.backend.removeFile(logFileName(path, ".ckpt"));
      await writeSettings(db.backend, { ...db.settings, format: to.name });
      for (const path of db.repositories) {
        await db.backend.removeFile(logFileName(path, from.fileExtension));
      }
      lines.push(`${SETTINGS_FILE}: format ${to.name}`);
    }
  } finally {
    bar.end();
    await db.backend.close();
  }
  await io.out(`${lines.join("\n")}\n`);
  return EXIT.ok;
}
