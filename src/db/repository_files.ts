/**
 * A stored repository's files: its log and its checkpoint. Opening reads the checkpoint (when it
 * matches the log) and replays only the log after it; writing appends blocks with group commit;
 * a new checkpoint is written in the background once enough log has grown past the last one
 * (see checkpointDue), and on close.
 */
import type { SealedBlock } from "../core/block.ts";
import { isCairnError } from "../core/errors.ts";
import type { CryptoSuite, SigningKey } from "../core/signing.ts";
import type { Repository } from "../repo/repository.ts";
import { sliceBudgetMs } from "../runtime/scheduling.ts";
import type { StorageBackend } from "../storage/backend.ts";
import {
  type Checkpoint,
  decodeCheckpoint,
  encodeCheckpoint,
  encodeCheckpointInSlices,
} from "../storage/checkpoint.ts";
import type { CheckpointOwner } from "../storage/checkpoint_seal.ts";
import { logFormatNamed } from "../storage/log_convert.ts";
import { type Durability, type OpenedLog, RepositoryLog } from "../storage/repository_log.ts";
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

export class RepositoryFiles {
  readonly #backend: StorageBackend;
  readonly #checkpointName: string;
  readonly #owner: CheckpointOwner;
  readonly #opened: OpenedLog;
  readonly #checkpoint: Checkpoint | undefined;
  /** Why an existing checkpoint file could not be used, if it could not. */
  readonly #checkpointProblem: string | undefined;
  #repo: Repository | undefined;
  #checkpointedLength: number;
  /** Size of the checkpoint file last read or written (0: none). */
  #checkpointBytes: number;
  #checkpointing: Promise<void> | undefined;

  private constructor(
    backend: StorageBackend,
    checkpointName: string,
    owner: CheckpointOwner,
    opened: OpenedLog,
    checkpoint: Checkpoint | undefined,
    checkpointBytes: number,
    checkpointProblem: string | undefined,
  ) {
    this.#backend = backend;
    this.#checkpointName = checkpointName;
    this.#owner = owner;
    this.#opened = opened;
    this.#checkpoint = checkpoint;
    this.#checkpointProblem = checkpointProblem;
    this.#checkpointedLength = opened.fromCheckpoint ? checkpoint!.logLength : 0;
    this.#checkpointBytes = opened.fromCheckpoint ? checkpointBytes : 0;
  }

  /**
   * `key` is the database's session key: it signs the repository's checkpoints, and a checkpoint
   * it did not sign for `path` is not used (checkpoint_seal.ts).
   */
  static async open(
    backend: StorageBackend,
    path: string,
    formatName: LogFormatName,
    durability: Durability,
    suite: CryptoSuite,
    key: SigningKey,
  ): Promise<RepositoryFiles> {
    const owner = { key, repository: path, suite };
    const format = logFormatNamed(formatName);
    const checkpointName = logFileName(path, ".ckpt");
    const logName = logFileName(path, format.fileExtension);
    // Both files at once: each read is a round trip to the runtime's I/O threads.
    const [stored, logBytes] = await Promise.all([
      backend.readFile(checkpointName),
      backend.readFile(logName),
    ]);
    let checkpoint: Checkpoint | undefined;
    let problem: string | undefined;
    if (stored) {
      try {
        checkpoint = await decodeCheckpoint(stored, owner);
      } catch (err) {
        if (!isCairnError(err)) throw err;
        problem = err.message;
      }
    }
    const opened = await RepositoryLog.open(
      backend,
      logName,
      logBytes ?? new Uint8Array(),
      format,
      durability,
      suite,
      checkpoint,
    );
    if (checkpoint && !opened.fromCheckpoint) problem = "it does not match the log";
    const checkpointBytes = stored?.length ?? 0;
    return new RepositoryFiles(
      backend,
      checkpointName,
      owner,
      opened,
      checkpoint,
      checkpointBytes,
      problem,
    );
  }

  /** Appends a block (the repository's persist hook); may start a background checkpoint. */
  append(sealed: SealedBlock): Promise<void> {
    const appended = this.#opened.log.append(sealed);
    appended.then(() => {
      const grown = this.#opened.log.position().length - this.#checkpointedLength;
      if (checkpointDue(grown, this.#checkpointBytes)) {
        this.#checkpointing ??= this.#writeCheckpoint().finally(
          () => (this.#checkpointing = undefined),
        );
      }
    }, () => {});
    return appended;
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
    const loaded = await repo.load(scan.blocks);
    return {
      damaged: scan.damaged,
      tornTailBytes: scan.tornTail?.length ?? 0,
      unloadable: loaded.unloadable,
      checkpointProblem: this.#checkpointProblem,
    };
  }

  /** Everything appended so far on disk (fsync), and any background checkpoint finished. */
  async sync(): Promise<void> {
    await this.#opened.log.sync();
    await this.#checkpointing;
  }

  /** Writes a final checkpoint if the log grew since the last one, then closes the log. */
  async close(): Promise<void> {
    await this.#checkpointing;
    if (this.#opened.log.position().length > this.#checkpointedLength) {
      await this.#writeCheckpoint();
    }
    await this.#opened.log.close();
  }

  /**
   * Snapshot and log position are taken in the same synchronous step, when nothing is being
   * sealed or appended, so the checkpoint reflects exactly the log prefix it names.
   */
  async #writeCheckpoint(): Promise<void> {
    const repo = this.#repo;
    const log = this.#opened.log;
    if (!repo) return;
    await repo.flush().catch(() => {});
    const snapshot = log.idle ? repo.snapshot() : undefined;
    if (!snapshot) return; // writes keep arriving: the next append or close tries again
    const position = log.position();
    // On a browser page in slices, the page taking its turns between them (sliceBudgetMs).
    const sliceMs = sliceBudgetMs();
    const file = sliceMs === null
      ? await encodeCheckpoint(snapshot, position, this.#owner)
      : await encodeCheckpointInSlices(snapshot, position, this.#owner, { sliceMs });
    await this.#backend.writeFileAtomic(this.#checkpointName, file);
    this.#checkpointedLength = position.length;
    this.#checkpointBytes = file.length;
  }
}
