/**
 * `cairndb import <dir>`: items from an export (item_file.ts) on standard input, written as the
 * database's own session through an opened database — signed and merged like any write. The
 * whole file is checked first, then its text fields against the database's (held_texts.ts): a
 * file with anything wrong imports nothing. Takes the writer lock
 * (E_LOCKED while the database is open elsewhere); a new directory becomes a new database.
 */
import { Cairn, watchRepositories } from "../db/database.ts";
import type { Repository } from "../repo/repository.ts";
import type { CliIo } from "./io.ts";
import { HeldTexts } from "./held_texts.ts";
import { type ExportedItem, parseItemFile } from "./item_file.ts";
import { progress } from "./progress.ts";
import { type Arguments, directoryArgument, EXIT } from "./usage.ts";

export const IMPORT_OPTIONS: string[] = [];

export async function importItems(io: CliIo, args: Arguments): Promise<number> {
  const directory = directoryArgument(args, "import");
  const repositories = parseItemFile(await io.readInput());
  const db = await Cairn.open({
    path: directory,
    onWarning: ({ repository, message }) => io.error(`${repository}: ${message}`),
  });
  const opened = new Map<string, Repository>();
  const unwatch = watchRepositories(db, {
    opened: (repo) => opened.set(repo.path, repo),
    closed: (repo) => opened.delete(repo.path),
  });
  const bar = progress(io, "import");
  const lines: string[] = [];
  try {
    const paths = Object.keys(repositories);
    // Checked against what the database holds as text before anything is written.
    const texts = await HeldTexts.read(directory, paths);
    for (const path of paths) {
      texts.get(path)!.check(repositories[path], `repositories[${JSON.stringify(path)}]`);
    }
    for (const [i, path] of paths.entries()) {
      bar.step(i, paths.length, path);
      await db.open(path);
      const written = writeItems(opened.get(path)!, repositories[path], texts.get(path)!);
      lines.push(`${path}: ${written} of ${repositories[path].length} items written`);
    }
    await db.flush();
  } finally {
    bar.end();
    unwatch();
    await db.close();
  }
  await io.out(`${lines.join("\n")}${lines.length > 0 ? "\n" : ""}`);
  return EXIT.ok;
}

/**
 * Writes each item that differs from what the repository holds (a new key, a deleted one, or
 * another value or schema); returns how many were written. Importing the same file twice writes
 * nothing the second time.
 */
function writeItems(repo: Repository, items: readonly ExportedItem[], texts: HeldTexts): number {
  let written = 0;
  for (const item of items) {
    const current = repo.value(item.key);
    if (texts.holds(current, item)) continue;
    texts.write(repo, item, current !== undefined);
    written++;
  }
  return written;
}
