/**
 * The checks a block passes before anything of it applies: whether its author may write here and
 * its signature holds (`authenticate`), and whether its commits fit the history held (`check`):
 * known parents of the same key stamped before the child, values that match their schema, text
 * edits on characters that exist, and — for a peer's block — stamps not too far ahead of our
 * clock. A block that fails any of them is refused whole.
 */
import { type BlockSigner, type SealedBlock, verifyBlock } from "../core/block.ts";
import { type Commit, commitId } from "../core/commit.ts";
import { CairnError } from "../core/errors.ts";
import { hlcToMillis, type HybridClock } from "../core/hlc.ts";
import { compareStamps } from "../core/merge/types.ts";
import { checkWireField, checkWireRecord, type SchemaRegistry } from "../core/schema.ts";
import type { CryptoSuite } from "../core/signing.ts";
import { CommitView, ViewMemos, type ViewSources } from "./author_view.ts";
import type { CommitGraph } from "./commit_graph.ts";
import type { HeldBackCommits } from "./held_back.ts";
import { type BlockTextCheck, type TextFields, withEditsAsEmptyText } from "./text_fields.ts";

/** What the checks read of the repository they guard. */
export interface VerifierHost {
  readonly session: string;
  /** null in trusted mode: blocks are neither signed nor verified. */
  readonly signer: BlockSigner | null;
  readonly suite: CryptoSuite;
  readonly registry: SchemaRegistry;
  readonly clock: HybridClock;
  /** Whether blocks by this session (other than the own one) may enter. */
  isTrusted(session: string, publicKey: Uint8Array): boolean;
  /** Commits applied. */
  readonly graph: Pick<CommitGraph, "holds" | "get" | "addedTo" | "watch" | "unwatch">;
  /** Commits held back for missing history. */
  readonly heldBack: Pick<HeldBackCommits, "has" | "get">;
  /** The leaf `id` of the item `key`, if it is one: found without decoding history. */
  leaf(key: string, id: string): Commit | undefined;
  /** The leaves of the item `key` applied here. */
  leaves(key: string): readonly Commit[];
  readonly texts: Pick<TextFields, "check" | "fieldsOf" | "opsOf">;
}

/** What checking a block found: the commits that must wait, and its text edits as checked. */
export interface CheckedBlock {
  /** Each commit that must wait, with a parent it waits for; undefined when none must. */
  readonly waits: Map<Commit, string> | undefined;
  readonly texts: BlockTextCheck | undefined;
}

export class BlockVerifier {
  readonly #host: VerifierHost;
  readonly #views: ViewMemos;

  constructor(host: VerifierHost) {
    this.#host = host;
    this.#views = new ViewMemos(host.graph);
  }

  /**
   * E_UNTRUSTED_SESSION unless the block's author may write here (or `anyAuthor`); then its
   * signature (`oneOfMany`: see Ed25519.verify).
   */
  async authenticate(sealed: SealedBlock, anyAuthor = false, oneOfMany = false): Promise<void> {
    const host = this.#host;
    if (!host.signer) return; // trusted mode
    const { session, publicKey } = sealed.block;
    if (!anyAuthor && session !== host.session && !host.isTrusted(session, publicKey)) {
      throw new CairnError(
        "E_UNTRUSTED_SESSION",
        `block by session ${session}, which is not trusted`,
      );
    }
    await verifyBlock(sealed, host.suite, { oneOfMany });
  }

  /**
   * Graph rules for incoming commits: known parents of the same key, stamped before the child;
   * values matching their schema; and text inserts placed between characters that were
   * neighbours for their author (author_view.ts) — the last two not checked again for blocks
   * from our own storage (`stored`), which were checked when they first entered. The clock
   * (#checkClock) is asked unless `stored`, or the block was accepted already (`checkClock`).
   *
   * Returns the commits that must wait, each with a parent it waits for: a parent held back, or
   * — in a stored block only, after damage — a parent not held at all (none, the usual case);
   * and the block's text edits as checked, for applying them (TextFields.apply).
   */
  check(sealed: SealedBlock, stored: boolean, checkClock = !stored): CheckedBlock {
    const host = this.#host;
    if (checkClock) this.#checkClock(sealed);
    const inBlock = new Map<string, Commit>();
    /**
     * The commits of the block checked so far that apply with it (none waits), for the views:
     * gathered once the first view is made (most blocks edit no text and make none).
     */
    let applying: EarlierCommits | undefined;
    let sources: ViewSources | undefined;
    const viewSources = () => {
      if (sources === undefined) {
        applying = new EarlierCommits();
        for (const [id, commit] of inBlock) if (!waits?.has(commit)) applying.add(id, commit);
        sources = this.#viewSources(applying);
      }
      return sources;
    };
    let waits: Map<Commit, string> | undefined;
    let texts: BlockTextCheck | undefined;
    for (const commit of sealed.block.commits) {
      const id = commitId(commit);
      if (host.graph.holds(commit.session, commit.seq) || host.heldBack.has(id)) {
        throw badCommit(id, "is already held");
      }
      const { parents } = commit;
      let first: Commit | undefined;
      // A set, not a search of the list: a hostile commit may name any number of parents.
      const named = parents.length > 1 ? new Set<string>() : undefined;
      for (const parentId of parents) {
        if (named?.has(parentId)) throw badCommit(id, `names parent ${parentId} twice`);
        named?.add(parentId);
        const parent = inBlock.get(parentId) ?? host.leaf(commit.key, parentId) ??
          host.graph.get(parentId) ?? host.heldBack.get(parentId);
        if (!parent && !stored) throw badCommit(id, `names unknown parent ${parentId}`);
        if (parentId === parents[0]) first = parent;
        if (parent) {
          if (parent.key !== commit.key) {
            throw badCommit(id, `has parent ${parentId} of another key`);
          }
          if (compareStamps(parent, commit) >= 0) {
            throw badCommit(id, `is not stamped after parent ${parentId}`);
          }
        }
        const mustWait = !parent || host.heldBack.has(parentId) || waits?.has(parent);
        if (mustWait && !waits?.has(commit)) (waits ??= new Map()).set(commit, parentId);
      }
      if (!stored) this.#checkValue(commit, id, first);
      // Text edits of a commit that waits are checked when what it waits for has come.
      if (!waits?.has(commit)) {
        // Made only for a commit that edits text: one that does not costs nothing here.
        const view = stored ? undefined : () => new CommitView(commit, viewSources());
        host.texts.check(commit, texts ??= new Map(), view);
        applying?.add(id, commit);
      }
      inBlock.set(id, commit);
    }
    return { waits, texts };
  }

  /**
   * What the author of `commit`, a commit held back and released (Repository), had seen of its
   * item's text. Made without the item's kept views, and keeping none: the commit is in the
   * graph already, so what it would keep would count it as entered after it, and the item's next
   * commit could take over a view missing the commits of others that entered meanwhile.
   */
  viewOf(commit: Commit): CommitView {
    const sources = this.#viewSources(new EarlierCommits());
    return new CommitView(commit, { ...sources, memos: new ViewMemos(NOT_COUNTED) });
  }

  /** What views read, `earlier` being the block's commits checked so far (one per block). */
  #viewSources(earlier: EarlierCommits): ViewSources {
    const host = this.#host;
    return {
      leaves: (key) => host.leaves(key),
      get: (id) => host.graph.get(id),
      entered: (key) => host.graph.addedTo(key) + earlier.countOf(key),
      earlier: earlier.byId,
      opsOf: (commit, field) => host.texts.opsOf(commit, field),
      memos: this.#views,
    };
  }

  /**
   * A block from a peer whose newest commit is stamped too far ahead of our clock is refused
   * (E_CLOCK_AHEAD): it would win every merge against edits made meanwhile, and a signed stamp
   * cannot be clamped. The chain keeps its place, so the next exchange sends the block again and
   * it applies once our clock has caught up. Not asked of our own storage: what was accepted
   * once always opens.
   */
  #checkClock(sealed: SealedBlock): void {
    let newest = 0;
    for (const commit of sealed.block.commits) if (commit.hlc > newest) newest = commit.hlc;
    const clock = this.#host.clock;
    if (clock.admits(newest)) return;
    const { session, seq } = sealed.block;
    throw new CairnError(
      "E_CLOCK_AHEAD",
      `block ${session}/${seq} is stamped ${duration(hlcToMillis(newest) - Date.now())} ahead ` +
        `of this clock (at most ${duration(clock.maxAheadMillis)}); it applies once the clock ` +
        `has caught up`,
    );
  }

  /**
   * Values of known schemas must match them; unknown schemas are checked when registered and read.
   * A delta changes the live value of its first parent (`first`) under the same schema and keeps
   * its required fields, so its value matches whenever that parent's does: a delta on nothing, on
   * a delete or on another schema's value would make one that no replica could read.
   */
  #checkValue(commit: Commit, id: string, first: Commit | undefined): void {
    if (commit.kind === "delta") {
      if (first === undefined || first.kind === "delete") {
        throw badCommit(id, "is a delta without a live first parent to change");
      }
      if (first.schema !== commit.schema) {
        throw badCommit(id, `is a delta under ${commit.schema} on a value under ${first.schema}`);
      }
    }
    const schema = this.#host.registry.get(commit.schema);
    if (!schema) return;
    const text = this.#host.texts.fieldsOf(commit.schema);
    try {
      if (commit.kind === "value") {
        checkWireRecord(schema, withEditsAsEmptyText(commit.value, text));
      } else if (commit.kind === "delta") {
        for (const field in commit.set) {
          // Text edits are checked against the field's document (TextFields.check).
          if (!text.includes(field) || !Array.isArray(commit.set[field])) {
            checkWireField(schema, field, commit.set[field]);
          }
        }
        for (const field of commit.unset) {
          if (!Object.hasOwn(schema.fields, field)) {
            throw new Error(`unsets unknown field ${field}`);
          }
          if (schema.fields[field].required) throw new Error(`unsets required field ${field}`);
        }
      }
    } catch (err) {
      throw badCommit(id, `does not match schema ${commit.schema}: ${(err as Error).message}`);
    }
  }
}

/** A duration for a message: "7 minutes", "3 hours", "36525 days". */
function duration(ms: number): string {
  const minutes = Math.max(1, Math.round(ms / 60_000));
  if (minutes < 120) return `${minutes} minutes`;
  const hours = Math.round(minutes / 60);
  return hours < 48 ? `${hours} hours` : `${Math.round(hours / 24)} days`;
}

function badCommit(id: string, why: string): CairnError {
  return new CairnError("E_BAD_COMMIT", `commit ${id} ${why}`);
}

/** For views whose memos are thrown away: nothing to count. */
const NOT_COUNTED = { watch() {}, unwatch() {} };

/** A block's commits checked so far that apply with it, by id, and how many per item. */
class EarlierCommits {
  readonly byId = new Map<string, Commit>();
  readonly #perItem = new Map<string, number>();

  add(id: string, commit: Commit): void {
    this.byId.set(id, commit);
    this.#perItem.set(commit.key, this.countOf(commit.key) + 1);
  }

  countOf(key: string): number {
    return this.#perItem.get(key) ?? 0;
  }
}
