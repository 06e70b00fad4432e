/**
 * A database directory read without opening it: no writer lock, no log cut back, no checkpoint
 * written, no file touched — what `inspect`, `verify` and `export` need (and `import`, for the
 * text fields the logs hold: held_texts.ts), since opening with
 * `Cairn.open` repairs what it finds (a torn tail is cut, a damaged log is rewritten once
 * repaired, checkpoints are written on close). The files are read with the storage layer's own
 * readers, and each repository's blocks are applied to an in-memory Repository as opening would.
 */
import { type SealedBlock, sessionIdFromPublicKey, verifyBlock } from "../core/block.ts";
import { CairnError, isCairnError } from "../core/errors.ts";
import { HybridClock } from "../core/hlc.ts";
import { SchemaRegistry } from "../core/schema.ts";
import type { CryptoSuite, SigningKey } from "../core/signing.ts";
import { readCheckpointFile } from "../db/repository_files.ts";
import { type MissingHistory, Repository } from "../repo/repository.ts";
import { cryptoSuite } from "../runtime/crypto_suite.ts";
import type { StorageBackend } from "../storage/backend.ts";
import { openFsBackend } from "../storage/backends/fs.ts";
import { type ByteSource, crc32cOf, fileSource } from "../storage/byte_source.ts";
import { decodeCheckpoint } from "../storage/checkpoint.ts";
import { logFormatNamed } from "../storage/log_convert.ts";
import type { LogFormat, LogScan } from "../storage/log_format.ts";
import {
  type DatabaseSettings,
  logFileName,
  readSettings,
  repositoryOfLogFile,
} from "../storage/settings.ts";
import { CurrentTexts } from "./current_texts.ts";

const NODE_FS = "node:fs/promises";

export interface StoredDatabase {
  readonly directory: string;
  /** Read-only use only: the lock is never taken and nothing is written through it. */
  readonly backend: StorageBackend;
  readonly settings: DatabaseSettings;
  readonly format: LogFormat;
  readonly suite: CryptoSuite;
  readonly key: SigningKey;
  readonly session: string;
  /** Repository paths with a log of the database's format, sorted. */
  readonly repositories: readonly string[];
}

/**
 * Reads `directory`'s settings and lists its repositories. E_NOT_A_LOG when it is not a
 * database directory (no cairn.json: nothing is created there). With `lock`, takes the writer
 * lock first (E_LOCKED while the database is open elsewhere), for a command that rewrites
 * files; `backend.close()` releases it.
 */
export async function readStoredDatabase(
  directory: string,
  { lock = false } = {},
): Promise<StoredDatabase> {
  const fs: typeof import("node:fs/promises") = await import(NODE_FS);
  const settingsFile = `${directory}/cairn.json`;
  try {
    await fs.stat(settingsFile);
  } catch {
    throw new CairnError("E_NOT_A_LOG", `${directory} is not a Cairn database (no cairn.json)`);
  }
  const backend = await openFsBackend(directory);
  try {
    if (lock) await backend.acquireLock();
    const settings = (await readSettings(backend))!;
    const format = logFormatNamed(settings.format);
    const suite = await cryptoSuite();
    const key = await suite.ed25519.fromSecret(settings.secretKey);
    // A file whose name is no repository's ("a b.log", a copy left beside the logs) is not one:
    // opening never reads it, and an export naming it could not be imported.
    const repositories = (await backend.listFiles())
      .map((name) => repositoryOfLogFile(name, format))
      .filter((path) => path !== undefined)
      .sort();
    // A convert meanwhile (it takes the lock, which reading does not): the logs listed may be
    // of the other format, or gone.
    if ((await readSettings(backend))?.format !== settings.format) {
      throw changedWhileRead(directory);
    }
    const session = await sessionIdFromPublicKey(key.publicKey, suite);
    return { directory, backend, settings, format, suite, key, session, repositories };
  } catch (err) {
    await backend.close();
    throw err;
  }
}

function changedWhileRead(directory: string): CairnError {
  return new CairnError(
    "E_IO",
    `${directory} changed format while it was read (a convert ran): run the command again`,
  );
}

/** The checkpoint of a repository, as opening would judge it. */
export type CheckpointState =
  | { readonly present: false }
  | {
    readonly present: true;
    readonly bytes: number;
    /** When the file was last written. */
    readonly modified: Date;
    /** Why opening would not use it (and rebuild it from the log), if it would not. */
    readonly problem: string | undefined;
  };

export interface StoredRepository {
  readonly path: string;
  readonly logName: string;
  readonly logBytes: number;
  readonly checkpointName: string;
  /** The log as read: blocks, damaged records, a torn tail. */
  readonly scan: LogScan;
  readonly checkpoint: CheckpointState;
  /** The repository as opening would make it, in memory. */
  readonly repository: Repository;
  /** Its text fields' texts, which its items' values do not hold without the schemas. */
  readonly texts: CurrentTexts;
  /** Blocks written in trusted mode: they carry no signature to check. */
  readonly unsigned: number;
  /** Blocks whose signature does not verify: opening leaves them out, as damage. */
  readonly badSignatures: readonly BlockProblem[];
  /** Blocks that could not be applied: a fork of their session's chain, a bad commit. */
  readonly unloadable: readonly BlockProblem[];
  readonly missing: MissingHistory;
}

export interface BlockProblem {
  readonly session: string;
  readonly seq: number;
  /** Where the block's record starts in the log. */
  readonly offset: number;
  readonly error: CairnError;
}

/**
 * A log that cannot be read at all — not a log of the database's format (a header overwritten, a
 * stray file with the log's extension), or an I/O error: `reason`, with the file named.
 */
export class UnreadableLog extends CairnError {
  readonly file: string;
  readonly reason: CairnError;

  constructor(file: string, reason: CairnError) {
    super(reason.code, `${file}: ${reason.message.slice(reason.code.length + 2)}`, {
      cause: reason,
    });
    this.file = file;
    this.reason = reason;
  }
}

/**
 * Reads one repository's log and checkpoint and applies its blocks in memory. UnreadableLog when
 * the log cannot be read at all.
 */
export async function readStoredRepository(
  db: StoredDatabase,
  path: string,
): Promise<StoredRepository> {
  const logName = logFileName(path, db.format.fileExtension);
  const { log, scan } = await readLog(db, logName);
  const checkpointName = logFileName(path, ".ckpt");
  const checkpoint = await checkpointState(db, path, checkpointName, log);
  const repository = new Repository(path, {
    session: db.session,
    publicKey: db.key.publicKey,
    // Signatures are checked below, one by one, so that each failure can be named.
    signer: null,
    suite: db.suite,
    registry: new SchemaRegistry(),
    clock: new HybridClock(),
    isTrusted: () => true,
  });
  let unsigned = 0;
  const badSignatures: BlockProblem[] = [];
  const verified: SealedBlock[] = [];
  // A fork holds two blocks at one place; the later one is the block that cannot be applied.
  const offsets = new Map<string, number>();
  for (const [i, sealed] of scan.blocks.entries()) {
    const offset = scan.blockOffsets[i];
    offsets.set(`${sealed.block.session}/${sealed.block.seq}`, offset);
    if (sealed.block.signature.length === 0) {
      unsigned++;
      verified.push(sealed);
      continue;
    }
    try {
      await verifyBlock(sealed, db.suite);
      verified.push(sealed);
    } catch (err) {
      if (!isCairnError(err)) throw err;
      badSignatures.push({
        session: sealed.block.session,
        seq: sealed.block.seq,
        offset,
        error: err,
      });
    }
  }
  const report = await repository.load(verified);
  const texts = new CurrentTexts(repository);
  return {
    path,
    logName,
    logBytes: log.length,
    checkpointName,
    scan,
    checkpoint,
    repository,
    texts,
    unsigned,
    badSignatures,
    unloadable: report.unloadable.map((problem) => ({
      ...problem,
      offset: offsets.get(`${problem.session}/${problem.seq}`)!,
    })),
    missing: repository.missingHistory(),
  };
}

async function readLog(
  db: StoredDatabase,
  name: string,
): Promise<{ log: ByteSource; scan: LogScan }> {
  try {
    const log = await fileSource(db.backend, name);
    // Listed, then gone: a convert removed it. Read as empty, the export would lack its items.
    if (log.length === 0 && await db.backend.readRange(name, 0, 0) === undefined) {
      throw changedWhileRead(db.directory);
    }
    return { log, scan: await db.format.scan(log, db.suite) };
  } catch (err) {
    if (!isCairnError(err)) throw err;
    throw new UnreadableLog(name, err);
  }
}

async function checkpointState(
  db: StoredDatabase,
  path: string,
  name: string,
  log: ByteSource,
): Promise<CheckpointState> {
  const fs: typeof import("node:fs/promises") = await import(NODE_FS);
  const stat = await fs.stat(`${db.directory}/${name}`).catch(() => undefined);
  if (stat === undefined) return { present: false };
  const present = { present: true, bytes: stat.size, modified: stat.mtime } as const;
  // As opening reads it (junk of any size refused unread), and as opening does, a checkpoint
  // that cannot be read is a problem to report, not a reason to refuse the repository: opening
  // rebuilds it from the log. (Read whole and thrown, it failed export, inspect and verify.)
  let stored: Uint8Array | undefined;
  try {
    stored = await readCheckpointFile(db.backend, name);
  } catch (err) {
    if (!isCairnError(err)) throw err;
    return { ...present, problem: err.message };
  }
  if (stored === undefined) return { present: false };
  let problem: string | undefined;
  try {
    const checkpoint = await decodeCheckpoint(stored, {
      key: db.key,
      repository: path,
      suite: db.suite,
    });
    if (checkpoint.logLength > log.length) {
      problem = `it covers ${checkpoint.logLength} bytes of log; the log has ${log.length}`;
    } else if (await crc32cOf(log, 0, checkpoint.logLength) !== checkpoint.logCrc) {
      problem = "the log it covers has changed";
    }
  } catch (err) {
    if (!isCairnError(err)) throw err;
    problem = err.message;
  }
  return { ...present, bytes: stored.length, problem };
}
