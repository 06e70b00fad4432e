/**
 * `cairndb export <dir> [--repository /path]`: every live item of every repository (or of one)
 * as plain JSON on standard output (item_file.ts), for backups and for moving data elsewhere.
 * Reads only (stored_database.ts), so it runs while the database is closed or not, and changes
 * nothing.
 */
import { CairnError } from "../core/errors.ts";
import type { CliIo } from "./io.ts";
import { type ExportedItem, type ExportedRepositories, formatItemFile } from "./item_file.ts";
import { progress } from "./progress.ts";
import { readStoredDatabase, readStoredRepository } from "./stored_database.ts";
import { type Arguments, directoryArgument, EXIT } from "./usage.ts";

export const EXPORT_OPTIONS = ["repository"];

export async function exportItems(io: CliIo, args: Arguments): Promise<number> {
  const directory = directoryArgument(args, "export");
  const db = await readStoredDatabase(directory);
  const repositories: Record<string, ExportedItem[]> = {};
  const bar = progress(io, "export");
  try {
    const only = args.options.get("repository");
    if (only !== undefined && !db.repositories.includes(only)) {
      throw new CairnError("E_BAD_PATH", `${directory} has no repository ${only}`);
    }
    const paths = only === undefined ? db.repositories : [only];
    for (const [i, path] of paths.entries()) {
      bar.step(i, paths.length, path);
      const { repository, texts } = await readStoredRepository(db, path);
      const items: ExportedItem[] = [];
      for (const key of repository.keys()) {
        const { schema, wire } = repository.value(key)!;
        // A text field as its text: the repository, without the schema, holds it as edits.
        items.push({ key, schema, value: texts.valueOf(key, wire!) });
      }
      repositories[path] = items;
    }
  } finally {
    bar.end();
    await db.backend.close();
  }
  await io.out(formatItemFile(repositories satisfies ExportedRepositories));
  return EXIT.ok;
}
