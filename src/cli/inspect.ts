/**
 * `cairndb inspect <dir> [--json]`: per repository, its items, sessions, blocks, log, the damage
 * opening would find and its checkpoint. Reads only (stored_database.ts): every file is left as
 * it was, damaged ones included. A log that cannot be read at all is shown as such, among the
 * others.
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

export interface RepositoryReport {
  readonly path: string;
  readonly items: number;
  readonly sessions: number;
  readonly blocks: number;
  readonly log: { readonly file: string; readonly format: string; readonly bytes: number };
  /** Damaged records opening would skip: [offset, length] in the log. */
  readonly damaged: readonly { readonly offset: number; readonly length: number }[];
  /** Bytes of an incomplete last record opening would cut (0: none). */
  readonly tornTailBytes: number;
  readonly checkpoint:
    | null
    | {
      readonly bytes: number;
      readonly written: string;
      readonly ageSeconds: number;
      readonly usable: boolean;
      readonly problem?: string;
    };
}

/** A repository whose log cannot be read at all: opening it fails the same way. */
export interface UnreadableReport {
  readonly path: string;
  readonly unreadable: { readonly file: string; readonly problem: string };
}

export interface InspectReport {
  readonly directory: string;
  readonly format: string;
  readonly session: string;
  readonly repositories: readonly (RepositoryReport | UnreadableReport)[];
}

export const INSPECT_OPTIONS = ["json"];

export async function inspect(io: CliIo, args: Arguments): Promise<number> {
  const directory = directoryArgument(args, "inspect");
  const db = await readStoredDatabase(directory);
  const repositories: (RepositoryReport | UnreadableReport)[] = [];
  const bar = progress(io, "inspect");
  try {
    for (const [i, path] of db.repositories.entries()) {
      bar.step(i, db.repositories.length, path);
      try {
        repositories.push(reportOf(await readStoredRepository(db, path), db.format.name));
      } catch (err) {
        if (!(err instanceof UnreadableLog)) throw err;
        repositories.push({ path, unreadable: { file: err.file, problem: err.reason.message } });
      }
    }
  } finally {
    bar.end();
    await db.backend.close();
  }
  const report = { directory, format: db.format.name, session: db.session, repositories };
  await io.out(args.options.has("json") ? `${JSON.stringify(report, null, 2)}\n` : text(report));
  return EXIT.ok;
}

function reportOf(stored: StoredRepository, format: string): RepositoryReport {
  const { scan, checkpoint } = stored;
  return {
    path: stored.path,
    items: stored.repository.count(),
    sessions: new Set(scan.blocks.map((sealed) => sealed.block.session)).size,
    blocks: scan.blocks.length,
    log: { file: stored.logName, format, bytes: stored.logBytes },
    damaged: scan.damaged.map(({ offset, length }) => ({ offset, length })),
    tornTailBytes: scan.tornTail?.length ?? 0,
    checkpoint: checkpoint.present
      ? {
        bytes: checkpoint.bytes,
        written: checkpoint.modified.toISOString(),
        ageSeconds: Math.max(0, Math.round((Date.now() - checkpoint.modified.getTime()) / 1000)),
        usable: checkpoint.problem === undefined,
        ...checkpoint.problem === undefined ? {} : { problem: checkpoint.problem },
      }
      : null,
  };
}

function text(report: InspectReport): string {
  const lines = [
    `${report.directory}: ${report.format} logs, session ${report.session}, ` +
    `${report.repositories.length} repositories`,
  ];
  for (const repo of report.repositories) {
    if ("unreadable" in repo) {
      lines.push(repo.path, `  unreadable  ${repo.unreadable.file}: ${repo.unreadable.problem}`);
      continue;
    }
    const damage = [
      ...repo.damaged.map(({ offset, length }) => `damaged record at byte ${offset} (${length} B)`),
      ...repo.tornTailBytes > 0 ? [`torn tail of ${repo.tornTailBytes} B`] : [],
    ];
    const checkpoint = repo.checkpoint === null
      ? "none"
      : `${repo.checkpoint.bytes} B, written ${repo.checkpoint.written} ` +
        `(${age(repo.checkpoint.ageSeconds)} ago), ` +
        (repo.checkpoint.usable ? "usable" : `unusable: ${repo.checkpoint.problem}`);
    lines.push(
      repo.path,
      `  items       ${repo.items}`,
      `  sessions    ${repo.sessions}`,
      `  blocks      ${repo.blocks}`,
      `  log         ${repo.log.file} (${repo.log.format}, ${repo.log.bytes} B)`,
      `  damage      ${damage.length === 0 ? "none" : damage.join(", ")}`,
      `  checkpoint  ${checkpoint}`,
    );
  }
  return `${lines.join("\n")}\n`;
}

function age(seconds: number): string {
  if (seconds < 120) return `${seconds} s`;
  if (seconds < 7200) return `${Math.round(seconds / 60)} min`;
  if (seconds < 172800) return `${Math.round(seconds / 3600)} h`;
  return `${Math.round(seconds / 86400)} days`;
}
