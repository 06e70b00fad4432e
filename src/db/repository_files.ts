/**
 * A stored repository's files: its log and its checkpoint. Opening reads the checkpoint (when it
 * matches the log) and replays only the log after it; writing appends blocks with group commit;
 * a new checkpoint is written in the background once enough log has grown past the last one
 * (see checkpointDue), and on close. A checkpoint that cannot be written is reported and skipped:
 * it is derived, the log holds everything. A log with damaged records is written anew, without
 * them, once every block they held has come back (see #rewriteLog).
 */
import { decodeBlock, type SealedBlock } from "../core/block.ts";
import { CairnError, isCairnError } from "../core/errors.ts";
import type { CryptoSuite, SigningKey } from "../core/signing.ts";
import type { RepositorySnapshot } from "../core/snapshot.ts";
import type { Repository } from "../repo/repository.ts";
import { sliceBudgetMs } from "../runtime/scheduling.ts";
import type { StorageBackend } from "../storage/backend.ts";
import { fileSource } from "../storage/byte_source.ts";
import {
  checkCheckpointStart,
  type Checkpoint,
  decodeCheckpoint,
  encodeCheckpoint,
  encodeCheckpointInSlices,
  MAX_CHECKPOINT_BYTES,
} from "../storage/checkpoint.ts";
import type { CheckpointOwner } from "../storage/checkpoint_seal.ts";
import { logFormatNamed } from "../storage/log_convert.ts";
import {
  type Durability,
  type LogPosition,
  type OpenedLog,
  RepositoryLog,
} from "../storage/repository_log.ts";
import { logFileName, type LogFormatName } from "../storage/settings.ts";
import type { RepositoryStats } from "./repository_handle.ts";

/** Log bytes written past the last checkpoint before a new one is written, at the least. */
const CHECKPOINT_AFTER_BYTES = 4 * 1024 * 1024;

/**
 * Whether the log has grown enough past the last checkpoint for a new one: by 4 MiB, or by the
 * last checkpoint's own size if that is larger. A checkpoint rewrites every item, so a fixed step
 * would make a large repository write many times more checkpoint than log (1M items: ~75 MB per
 * 4 MiB); this way a byte of log costs at most a byte of checkpoint, and opening replays at most
 * a checkpoint's worth of log.
 */
export function checkpointDue(logPastCheckpoint: number, lastCheckpointBytes: number): boolean {
  return logPastCheckpoint >= Math.max(CHECKPOINT_AFTER_BYTES, lastCheckpointBytes);
}

/**
 * How many times storing may end with writes waiting before a due checkpoint stops waiting for a
 * moment with none unsealed (a snapshot must match the log): bounded, since flush() and close()
 * wait for the checkpoint (SealPipeline.whenQuiet bounds overlapping rounds too).
 */
const QUIET_CHANCES = 16;

/** A checkpoint file is read whole in one go when it is at most this long. */
const CHECKPOINT_FIRST_READ = 64 * 1024;

/**
 * The checkpoint file, or undefined when there is none. Read whole only once its first bytes and
 * size say it can be one: a stray or junk file of gigabytes in its place is refused unread.
 */
export async function readCheckpointFile(
  backend: StorageBackend,
  name: string,
): Promise<Uint8Array | undefined> {
  const first = await backend.readRange(name, 0, CHECKPOINT_FIRST_READ);
  if (first === undefined) return undefined;
  checkCheckpointStart(first.bytes, first.size);
  if (first.bytes.length === first.size) return first.bytes;
  return await backend.readFile(name);
}

export class RepositoryFiles {
  readonly #backend: StorageBackend;
  readonly #suite: CryptoSuite;
  readonly #checkpointName: string;
  readonly #owner: CheckpointOwner;
  readonly #opened: OpenedLog;
  readonly #checkpoint: Checkpoint | undefined;
  /** Why an existing checkpoint file could not be used, if it could not. */
  readonly #checkpointProblem: string | undefined;
  readonly #warn: (message: string) => void;
  #repo: Repository | undefined;
  #checkpointedLength: number;
  /** Size of the checkpoint file last read or written (0: none). */
  #checkpointBytes: number;
  #checkpointing: Promise<void> | undefined;
  /** Set while the log holds damaged records; cleared once it is written anew without them. */
  #damaged: boolean;
  #rewriting: Promise<void> | undefined;
  /**
   * While the log is being loaded, a repair only sets this: a rewrite then would take the
   * repository's blocks before the rest of the log is loaded, and drop those.
   */
  #loading = false;
  #repairedWhileLoading = false;
  /** Whether opening created the log file (there was none): `discard` then removes it. */
  readonly #createdLog: boolean;
  readonly #logName: string;

  private constructor(
    backend: StorageBackend,
    suite: CryptoSuite,
    checkpointName: string,
    owner: CheckpointOwner,
    opened: OpenedLog,
    checkpoint: Checkpoint | undefined,
    checkpointBytes: number,
    checkpointProblem: string | undefined,
    warn: (message: string) => void,
    logName: string,
    createdLog: boolean,
  ) {
    this.#backend = backend;
    this.#logName = logName;
    this.#createdLog = createdLog;
    this.#suite = suite;
    this.#warn = warn;
    this.#checkpointName = checkpointName;
    this.#damaged = opened.scan.damaged.length > 0;
    this.#owner = owner;
    this.#opened = opened;
    this.#checkpoint = checkpoint;
    this.#checkpointProblem = checkpointProblem;
    this.#checkpointedLength = opened.fromCheckpoint ? checkpoint!.logLength : 0;
    this.#checkpointBytes = opened.fromCheckpoint ? checkpointBytes : 0;
  }

  /**
   * `key` is the database's session key: it signs the repository's checkpoints, and a checkpoint
   * it did not sign for `path` is not used (checkpoint_seal.ts). `directory` (the database's)
   * names files in messages the user can act on.
   */
  static async open(
    backend: StorageBackend,
    path: string,
    formatName: LogFormatName,
    durability: Durability,
    suite: CryptoSuite,
    warn: (message: string) => void,
    key: SigningKey,
    directory: string,
  ): Promise<RepositoryFiles> {
    const owner = { key, repository: path, suite };
    const format = logFormatNamed(formatName);
    const checkpointName = logFileName(path, ".ckpt");
    const logName = logFileName(path, format.fileExtension);
    // Both files at once: each read is a round trip to the runtime's I/O threads. The log is
    // read a window at a time (its first window here), the checkpoint whole.
    let problem: string | undefined;
    const [stored, logFile] = await Promise.all([
      // A checkpoint is derived: one that cannot be read (a directory in its place, a file too
      // large for memory) is rebuilt, like a damaged one.
      readCheckpointFile(backend, checkpointName).catch((err) => {
        // Its first bytes refused (not a checkpoint, too large), or a read that failed.
        problem = isCairnError(err) && err.code !== "E_IO"
          ? err.message
          : `it could not be read (${err instanceof Error ? err.message : String(err)})`;
        return undefined;
      }),
      fileSource(backend, logName),
    ]);
    let checkpoint: Checkpoint | undefined;
    if (stored) {
      try {
        checkpoint = await decodeCheckpoint(stored, owner);
      } catch (err) {
        if (!isCairnError(err)) throw err;
        problem = err.message;
      }
    }
    let opened: OpenedLog;
    try {
      opened = await RepositoryLog.open(
        backend,
        logName,
        logFile,
        format,
        durability,
        suite,
        checkpoint,
      );
    } catch (err) {
      // A failed open leaves no file behind: a log that held nothing (this open made it, or
      // it was empty) goes. One that existed is left as it is, and named in the error.
      if (logFile.length === 0) await backend.removeFile(logName).catch(() => {});
      throw inFile(err, `${directory}/${logName}`);
    }
    if (checkpoint && !opened.fromCheckpoint) problem = "it does not match the log";
    const checkpointBytes = stored?.length ?? 0;
    return new RepositoryFiles(
      backend,
      suite,
      checkpointName,
      owner,
      opened,
      checkpoint,
      checkpointBytes,
      problem,
      warn,
      logName,
      logFile.length === 0,
    );
  }

  /**
   * Closes the files of a repository whose opening failed after they were opened, without a
   * checkpoint; removes the log if this open created it, so a failed open leaves nothing behind.
   */
  async discard(): Promise<void> {
    await this.#opened.log.close().catch(() => {});
    if (this.#createdLog) await this.#backend.removeFile(this.#logName).catch(() => {});
  }

  /** Appends a block (the repository's persist hook); may start a background checkpoint. */
  append(sealed: SealedBlock): Promise<void> {
    const appended = this.#opened.log.append(sealed);
    appended.then(() => {
      const grown = this.#opened.log.position().length - this.#checkpointedLength;
      if (checkpointDue(grown, this.#checkpointBytes)) this.#checkpointInBackground();
    }, () => {});
    return appended;
  }

  /** Starts writing a checkpoint unless one is being written; resolves when that one is done. */
  #checkpointInBackground(): Promise<void> {
    return this.#checkpointing ??= this.#writeCheckpoint().finally(
      () => (this.#checkpointing = undefined),
    );
  }

  /**
   * Resolves when every block appended so far is stored (the repository's persisted hook),
   * writing again those a failed write left queued.
   */
  flush(): Promise<void> {
    return this.#opened.log.flush();
  }

  /**
   * Fills the repository from storage: the checkpoint (with its history read lazily from the
   * log) and the log after it, or the whole log. Returns what opening found.
   */
  async loadInto(repo: Repository): Promise<RepositoryStats & { checkpointProblem?: string }> {
    this.#repo = repo;
    const { log, scan, fromCheckpoint } = this.#opened;
    if (fromCheckpoint) {
      const covered = this.#checkpoint!.logLength;
      repo.restore(this.#checkpoint!, async () => (await log.readPrefix(covered)).blocks);
    }
    this.#loading = true;
    let loaded;
    try {
      loaded = await repo.load(scan.blocks);
    } finally {
      this.#loading = false;
    }
    // A lost block found further on in the log (a repair that stopped before the log was written
    // anew) made the history whole: the log can be written anew now.
    if (this.#repairedWhileLoading) this.repaired();
    return {
      damaged: scan.damaged,
      tornTailBytes: scan.tornTail?.length ?? 0,
      unloadable: loaded.unloadable,
      checkpointProblem: this.#checkpointProblem,
    };
  }

  /**
   * The repository's history is whole again (the repository's onRepaired hook): the log is
   * written anew in the background, without its damaged records.
   */
  repaired(): void {
    if (this.#loading) {
      this.#repairedWhileLoading = true;
      return;
    }
    this.#rewriting ??= this.#rewriteLog().finally(() => (this.#rewriting = undefined));
  }

  /**
   * Writes the log anew if it is damaged and nothing is missing any more. A failure loses
   * nothing — the old file stays whole, with every block — so it is reported, not thrown, and
   * the next close tries again.
   */
  async #rewriteLog(): Promise<void> {
    if (!this.#damaged || !this.#repo?.isWhole()) return;
    try {
      await this.#replaceLog();
    } catch (err) {
      this.#warn(`could not write the repaired log anew: ${(err as Error).message}`);
    }
  }

  /** Everything appended so far on disk (fsync), and any background checkpoint finished. */
  async sync(): Promise<void> {
    await this.#opened.log.sync();
    await this.#checkpointing;
    await this.#rewriting;
  }

  /**
   * Writes what the log has queued, a final checkpoint if the log grew since the last one, then
   * closes the log. Fails (E_IO) when the log cannot be written: the files then stay open and the
   * blocks queued, for another close() once there is room.
   */
  async close(): Promise<void> {
    await this.#rewriting;
    await this.#rewriteLog();
    await this.#checkpointing;
    await this.#opened.log.flush();
    if (this.#opened.log.position().length > this.#checkpointedLength) {
      await this.#writeCheckpoint();
    }
    await this.#opened.log.close();
  }

  /**
   * Replaces the log with the repository's blocks, in causal order, so the damaged records are
   * gone and the file reads whole; then a checkpoint of it. Writes keep going meanwhile: if a
   * block reaches the log while the new file is made, that attempt is dropped; after three,
   * close() tries again.
   */
  async #replaceLog(): Promise<void> {
    const repo = this.#repo!;
    const log = this.#opened.log;
    await this.#checkpointing;
    let replaced = false;
    for (let attempt = 0; attempt < 3 && !replaced; attempt++) {
      await repo.flush(); // the block that completed the repair may still be on its way
      const at = log.position();
      const frames = await repo.exportBlocks();
      const blocks = await Promise.all(
        frames.map((frame) => decodeBlock(frame, this.#suite, false)),
      );
      replaced = await log.replace(blocks, at);
    }
    if (!replaced) return;
    this.#damaged = false;
    await this.#checkpointing; // one begun meanwhile reflects the old file
    this.#checkpointedLength = 0;
    await this.#checkpointInBackground();
  }

  /**
   * Snapshot and log position are taken in the same synchronous step, when nothing is being
   * sealed or appended, so the checkpoint reflects exactly the log prefix it names. Never
   * rejects: a checkpoint that cannot be written (a full disk) is reported, and the next one
   * (the log growing further, or close) tries again; meanwhile opening replays more log.
   */
  async #writeCheckpoint(): Promise<void> {
    try {
      await this.#tryCheckpoint();
    } catch (err) {
      const why = err instanceof Error ? err.message : String(err);
      this.#warn(`could not write its checkpoint (${why}); the log holds everything`);
    }
  }

  async #tryCheckpoint(): Promise<void> {
    const repo = this.#repo;
    const log = this.#opened.log;
    if (!repo) return;
    await repo.flush().catch(() => {});
    const taken = await new Promise<
      { snapshot: RepositorySnapshot; position: LogPosition } | undefined
    >((resolve, reject) =>
      repo.whenQuiet((quiet) => {
        try {
          const snapshot = quiet && log.idle ? repo.snapshot() : undefined;
          resolve(snapshot && { snapshot, position: log.position() });
        } catch (err) {
          reject(err); // reported by #writeCheckpoint, not thrown into the seal pipeline
        }
      }, QUIET_CHANCES)
    );
    if (!taken) return; // writes keep arriving: the next append or close tries again
    const { snapshot, position } = taken;
    // On a browser page in slices, the page taking its turns between them (sliceBudgetMs).
    const sliceMs = sliceBudgetMs();
    const file = sliceMs === null
      ? await encodeCheckpoint(snapshot, position, this.#owner)
      : await encodeCheckpointInSlices(snapshot, position, this.#owner, { sliceMs });
    if (file.byteLength >= MAX_CHECKPOINT_BYTES) return; // see there: the log is replayed
    await this.#backend.writeFileAtomic(this.#checkpointName, file);
    this.#checkpointedLength = position.length;
    this.#checkpointBytes = file.length;
  }
}

/**
 * A file's refusal (not a log, a newer format) with the file named: the error is read by someone
 * who must find that file. Other errors pass as they are (an I/O error names its file already).
 */
export function inFile(err: unknown, name: string): unknown {
  if (!isCairnError(err, "E_NOT_A_LOG") && !isCairnError(err, "E_UNSUPPORTED_VERSION")) return err;
  const message = err.message.slice(err.code.length + 2); // without the "E_…: " prefix
  return new CairnError(err.code, `${name}: ${message}`, { cause: err });
}
