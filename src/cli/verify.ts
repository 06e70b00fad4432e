/**
 * `cairndb verify <dir> [--json]`: checks every record's checksum, every block's signature and
 * every session chain of every repository, and its checkpoint's seal, reading only. Prints each
 * problem with its file (and byte offset, or block); exit code 1 when there is any. A log that
 * cannot be read at all is one problem, and the other repositories are checked all the same.
 */
import type { CliIo } from "./io.ts";
import { progress } from "./progress.ts";
import {
  readStoredDatabase,
  readStoredRepository,
  type StoredRepository,
  UnreadableLog,
} from "./stored_database.ts";
import { type Arguments, directoryArgument, EXIT } from "./usage.ts";

export interface Problem {
  readonly file: string;
  /** Byte offset in the file, for damage found by reading it. */
  readonly offset?: number;
  /** The block, as `<session>/<seq>`, for a problem with one block. */
  readonly block?: string;
  readonly problem: string;
}

export const VERIFY_OPTIONS = ["json"];

export async function verify(io: CliIo, args: Arguments): Promise<number> {
  const directory = directoryArgument(args, "verify");
  const db = await readStoredDatabase(directory);
  const problems: Problem[] = [];
  let blocks = 0;
  let unsigned = 0;
  const bar = progress(io, "verify");
  try {
    for (const [i, path] of db.repositories.entries()) {
      bar.step(i, db.repositories.length, path);
      let stored: StoredRepository;
      try {
        stored = await readStoredRepository(db, path);
      } catch (err) {
        if (!(err instanceof UnreadableLog)) throw err;
        problems.push({ file: err.file, problem: err.reason.message });
        continue;
      }
      problems.push(...problemsOf(stored));
      blocks += stored.scan.blocks.length;
      unsigned += stored.unsigned;
    }
  } finally {
    bar.end();
    await db.backend.close();
  }
  const repositories = db.repositories.length;
  if (args.options.has("json")) {
    await io.out(`${JSON.stringify({ repositories, blocks, unsigned, problems }, null, 2)}\n`);
  } else {
    const lines = problems.map(({ file, offset, block, problem }) =>
      `${file}: ${offset !== undefined ? `byte ${offset}: ` : ""}` +
      `${block !== undefined ? `block ${block}: ` : ""}${problem}`
    );
    lines.push(
      problems.length === 0
        ? `ok: ${repositories} repositories, ${blocks} blocks: checksums, signatures and chains hold`
        : `${problems.length} problems in ${repositories} repositories (${blocks} blocks read)`,
    );
    if (unsigned > 0) lines.push(`${unsigned} blocks carry no signature (written in trusted mode)`);
    await io.out(`${lines.join("\n")}\n`);
  }
  return problems.length === 0 ? EXIT.ok : EXIT.problems;
}

function problemsOf(stored: StoredRepository): Problem[] {
  const file = stored.logName;
  const problems: Problem[] = stored.scan.damaged.map(({ offset, length, reason }) => ({
    file,
    offset,
    problem: `damaged record (${length} B): ${reason}`,
  }));
  if (stored.scan.tornTail) {
    const { offset, length } = stored.scan.tornTail;
    problems.push({ file, offset, problem: `torn tail: an incomplete last record (${length} B)` });
  }
  for (const { session, seq, offset, error } of [...stored.badSignatures, ...stored.unloadable]) {
    problems.push({ file, offset, block: `${session}/${seq}`, problem: error.message });
  }
  for (const { session, first, last } of stored.missing.blocks) {
    problems.push({
      file,
      block: first === last ? `${session}/${first}` : `${session}/${first}-${last}`,
      problem: "missing from its session's chain (the blocks after it name it)",
    });
  }
  if (stored.checkpoint.present && stored.checkpoint.problem !== undefined) {
    problems.push({
      file: stored.checkpointName,
      problem: `checkpoint unusable, opening rebuilds it: ${stored.checkpoint.problem}`,
    });
  }
  return problems;
}
