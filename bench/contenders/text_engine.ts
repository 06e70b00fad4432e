/**
 * What the text rows ask of an engine that edits shared text — Cairn (signed or trusted), Yjs,
 * Automerge — so that each row is written once and every engine does the same work: replicas of
 * one document holding one text, edited in transactions, brought up to date from each other by
 * the messages each engine would send a peer. Each engine's module (text_cairn.ts, text_yjs.ts,
 * text_automerge.ts) says how it does every step; `textEngine` picks one by contender.
 */
import type { ReplayPlan } from "../lib/replay_plan.ts";
import type { ConcurrentTxn, Patch, Units } from "../lib/traces.ts";

export interface TextReplica {
  /** Who writes here, as peers name it (Cairn: the session's public key). */
  readonly peer: string;
  /**
   * Applies the patches as one transaction: one commit in Cairn (sealed into a signed block with
   * the other commits of its tick, or of the ticks that end while the previous block is written);
   * one Yjs transaction; one Automerge change.
   */
  edit(patches: readonly Patch[]): void;
  /**
   * Resolves once every edit so far is in the engine's storage: Cairn: sealed and appended to
   * its log (not fsynced in relaxed mode); engines that keep their documents in memory: at once.
   */
  written(): Promise<void>;
  text(): string;
  /** Everything this replica holds that `peer` lacks, as a transport would carry it. */
  diff(peer: TextReplica): Promise<Uint8Array[]>;
  /** Takes in a peer's messages (in one transaction where the engine has them); any refused fails. */
  apply(messages: readonly Uint8Array[]): Promise<void>;
  /** The writers whose messages this replica holds or accepts, itself included. */
  peers(): Iterable<string>;
  /** Accepts these writers' messages from now on: Cairn trusts their keys; the others need not. */
  accept(peers: Iterable<string>): Promise<void>;
  /**
   * Resolves once every edit is committed as the engine commits it (Cairn: sealed and appended,
   * and on disk the background checkpoint the writing started written).
   */
  settle(): Promise<void>;
  /**
   * Bytes of the updates this replica's own transactions produced, each counted once as it was
   * produced: Cairn's signed blocks as exported, Yjs's update per transaction, Automerge's change.
   */
  updateBytes(): Promise<number>;
  /** Stores the document as the engine would keep it; the replica is closed afterwards. */
  store(): Promise<Stored>;
  close(): Promise<void>;
}

export interface Stored {
  /**
   * The history kept: Cairn's log on disk; for Yjs and Automerge, which keep no log of their own,
   * the bytes of every transaction's update (change) that an app appending each to storage
   * would write (`updateBytes`).
   */
  historyBytes: number;
  /**
   * What opening reads to get the current text: Cairn's checkpoint file; Yjs's encoded document
   * (`encodeStateAsUpdate`); Automerge's saved document (`save`).
   */
  snapshotBytes: number;
  /** Opens the stored document and reads its text; `close` ends what that opened. */
  load(): Promise<{ text: string; close(): Promise<void> }>;
}

export interface TextEngine {
  readonly units: Units;
  /** A replica creating a new document holding an empty text; stored where `onDisk` says. */
  create(options?: { onDisk?: boolean }): Promise<TextReplica>;
  /** A replica holding nothing yet: it gets the document from a peer. */
  join(): Promise<TextReplica>;
}

/** `to` takes in what `from` holds and it lacks, accepting the writers it comes from. */
export async function sync(from: TextReplica, to: TextReplica): Promise<void> {
  await to.accept(from.peers());
  await to.apply(await from.diff(to));
}

/** Fails unless a replica's text is the one expected: a row that computes the wrong text is void. */
export function checkText(actual: string, expected: string, what: string): void {
  if (actual === expected) return;
  let at = 0;
  while (at < actual.length && actual[at] === expected[at]) at++;
  throw new Error(
    `${what}: the final text differs from the expected one at index ${at} ` +
      `(${actual.length} characters, expected ${expected.length}): ` +
      `${JSON.stringify(actual.slice(at, at + 30))} instead of ` +
      `${JSON.stringify(expected.slice(at, at + 30))}`,
  );
}

/**
 * How a replay paces its transactions:
 * - "burst": one after another, each in a tick of its own (the await between them is what makes
 *   each one Cairn's own commit; Yjs and Automerge do not need it, and it costs them the same
 *   microtask). Cairn's default sealing seals the first tick's commit at once, and the commits of
 *   the ticks that end while a block is being written together into the next block;
 * - "written each": each transaction waits until the previous one is in storage, as edits typed
 *   at a human pace are (Cairn: a block of its own per transaction, appended to the log before
 *   the next; Yjs and Automerge keep their documents in memory and wait for nothing).
 */
export type Pace = "burst" | "written each";

/** Applies each transaction as its own engine transaction, at `pace`. */
export async function replay(
  replica: TextReplica,
  txns: readonly (readonly Patch[])[],
  pace: Pace = "burst",
): Promise<void> {
  for (const txn of txns) {
    replica.edit(txn);
    if (pace === "burst") await null;
    else await replica.written();
  }
}

/**
 * Runs a concurrent trace's replay plan: replicas created, each transaction applied as its own
 * (as in `replay`), replicas synced; every edit committed at the end.
 */
export async function runPlan(
  engine: TextEngine,
  plan: ReplayPlan,
  txns: readonly ConcurrentTxn[],
): Promise<TextReplica[]> {
  const replicas: TextReplica[] = [];
  for (const step of plan.steps) {
    switch (step.op) {
      case "create":
        replicas[step.replica] = await engine.create();
        break;
      case "join":
        replicas[step.replica] = await engine.join();
        break;
      case "sync":
        await sync(replicas[step.from], replicas[step.to]);
        break;
      case "edit":
        replicas[step.replica].edit(txns[step.txn].patches);
        await null;
        break;
    }
  }
  await Promise.all(replicas.map((r) => r.settle()));
  return replicas;
}

/**
 * What the replicas of Yjs and Automerge share: a document held in memory by one writer, with
 * nobody to trust and nothing to settle, and the bytes of its own updates counted as they come.
 */
export abstract class InMemoryReplica {
  abstract readonly peer: string;
  /** Bytes of the updates (changes) this replica's own transactions produced. */
  protected ownUpdateBytes = 0;

  peers(): Iterable<string> {
    return [this.peer];
  }

  accept(): Promise<void> {
    return Promise.resolve();
  }

  settle(): Promise<void> {
    return Promise.resolve();
  }

  written(): Promise<void> {
    return Promise.resolve();
  }

  updateBytes(): Promise<number> {
    return Promise.resolve(this.ownUpdateBytes);
  }
}
