/**
 * Inserts whose origins were not neighbours: a hostile writer names a left and a right character
 * in order, but with characters it had itself seen standing between them, or names characters it
 * claims (by what it followed) not to have seen. YATA places an insert
 * correctly only when every character between its origins is one its author had not seen (a
 * concurrent insert), so such an insert would be placed differently by replicas holding different
 * concurrent text. TextDoc.check refuses it when told what the author had seen; every replica
 * then decides the same way, since the characters its author had seen stand in the same order on
 * every replica.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { isCairnError } from "../../src/core/errors.ts";
import { type AuthorView, PendingEdits, TextDoc } from "../../src/core/text/text_doc.ts";
import type { CharId, TextOp } from "../../src/core/text/text_ops.ts";
import { envInteger } from "../harness/peers.ts";
import { seededRandom } from "../harness/random.ts";

const SCHEDULES = envInteger("CAIRN_TEXT_FUZZ") ?? 1000;
const SEED = envInteger("CAIRN_TEXT_FUZZ_SEED") ?? 20261128;

/** One edit: its operations, and every edit applied where it was made (its causal past). */
interface Edit {
  readonly id: number;
  readonly session: string;
  readonly ops: readonly TextOp[];
  readonly past: ReadonlySet<number>;
  /** A hostile block's edits: delivered together, always. */
  readonly block?: readonly number[];
}

class Replica {
  readonly doc = new TextDoc();
  readonly applied = new Set<number>();
  readonly refused = new Set<number>();
  readonly session: string;

  constructor(session: string) {
    this.session = session;
  }

  /**
   * Whether `edit` is new here and everything its author had applied has applied here, or comes
   * before it in `block`.
   */
  canTry(edit: Edit, block: readonly Edit[] = []): boolean {
    if (this.applied.has(edit.id) || this.refused.has(edit.id)) return false;
    for (const id of edit.past) {
      if (!this.applied.has(id) && !block.some((earlier) => earlier.id === id)) return false;
    }
    return true;
  }
}

/** Every character's identity in document order, deleted ones included. */
function charIds(doc: TextDoc): CharId[] {
  const ids: CharId[] = [];
  for (const run of doc.runs()) {
    for (let i = 0; i < run.length; i++) ids.push({ session: run.session, clock: run.clock + i });
  }
  return ids;
}

function order(doc: TextDoc): string {
  return charIds(doc).map(({ session, clock }) => `${session}:${clock}`).join(" ");
}

/** The view of an edit's author: the characters inserted by the edits in its past, or by itself. */
function viewOf(edit: Edit, creators: ReadonlyMap<string, number>): AuthorView {
  return {
    sawAny(session, from, end) {
      for (let clock = from; clock < end; clock++) if (saw(session, clock)) return true;
      return false;
    },
    sawAll(session, from, end) {
      for (let clock = from; clock < end; clock++) if (!saw(session, clock)) return false;
      return true;
    },
  };
  function saw(session: string, clock: number): boolean {
    const creator = creators.get(`${session}:${clock}`);
    return creator === edit.id || (creator !== undefined && edit.past.has(creator));
  }
}

/** Drops edit `id` from `past`, with every edit there that followed it: a past still closed. */
function forget(past: Set<number>, id: number | undefined, edits: readonly Edit[]): void {
  if (id === undefined) return;
  for (const other of past) if (other === id || edits[other].past.has(id)) past.delete(other);
}

/**
 * Checks then applies a block of one session's edits on `replica`, all checked before any
 * applies (later ones may name what earlier ones insert), each against its own author's view;
 * whether it was accepted.
 */
function deliver(
  replica: Replica,
  block: readonly Edit[],
  creators: ReadonlyMap<string, number>,
): boolean {
  const pending = new PendingEdits();
  const text = replica.doc.text;
  try {
    for (const edit of block) {
      const view = viewOf(edit, creators);
      for (const op of edit.ops) replica.doc.check(op, edit.session, pending, view);
    }
  } catch (err) {
    assert.ok(isCairnError(err, "E_BAD_COMMIT"), String(err));
    assert.equal(replica.doc.text, text, "a refused block changes nothing");
    for (const edit of block) replica.refused.add(edit.id);
    return false;
  }
  for (const edit of block) {
    for (const op of edit.ops) replica.doc.apply(op, edit.session);
    replica.applied.add(edit.id);
  }
  return true;
}

test(`text CRDT: inserts whose origins were not neighbours for their author are refused alike everywhere, and replicas converge (${SCHEDULES} schedules, seed ${SEED})`, () => {
  let refusedHostile = 0;
  let acceptedHostile = 0;
  for (let schedule = 0; schedule < SCHEDULES; schedule++) {
    const seed = SEED + schedule;
    const where = `seed ${seed}`;
    const random = seededRandom(seed);
    const count = 2 + Math.floor(random() * 3);
    const replicas = Array.from({ length: count }, (_, i) => new Replica(`s${i}`));
    const edits: Edit[] = [];
    /** The edit that inserted each character, by "session:clock". */
    const creators = new Map<string, number>();
    const record = (
      session: string,
      ops: readonly TextOp[],
      past: Set<number>,
      block?: number[],
    ) => {
      const edit: Edit = { id: edits.length, session, ops, past, block };
      for (const op of ops) {
        if (op.kind !== "insert") continue;
        for (let i = 0; i < op.text.length; i++) {
          creators.set(`${session}:${op.clock + i}`, edit.id);
        }
      }
      edits.push(edit);
      return edit;
    };
    const decisions = new Map<number, boolean>();
    const tryOn = (replica: Replica, block: readonly Edit[]) => {
      const accepted = deliver(replica, block, creators);
      for (const edit of block) {
        const before = decisions.get(edit.id);
        if (before === undefined) decisions.set(edit.id, accepted);
        else assert.equal(accepted, before, `${where}: edit ${edit.id} decided alike everywhere`);
      }
    };
    /** Takes edits it can, each with probability `chance`: one session's in a row as one block. */
    const receive = (replica: Replica, chance: number) => {
      let block: Edit[] = [];
      const flush = () => {
        if (block.length > 0) tryOn(replica, block);
        block = [];
      };
      for (const edit of edits) {
        if (edit.block !== undefined) {
          if (edit.block[0] !== edit.id) continue;
          flush();
          const members = edit.block.map((id) => edits[id]);
          const ready = members.every((member, i) => replica.canTry(member, members.slice(0, i)));
          if (ready && random() < chance) tryOn(replica, members);
          continue;
        }
        if (block.length > 0 && block[0].session !== edit.session) flush();
        if (replica.canTry(edit, block) && random() < chance) block.push(edit);
        else flush();
      }
      flush();
    };
    const steps = 10 + Math.floor(random() * 40);
    for (let step = 0; step < steps; step++) {
      const replica = replicas[Math.floor(random() * count)];
      const pick = random();
      if (pick < 0.4) {
        // Honest edits, one to three in a row, each applied where it is made at once.
        for (let n = 1 + Math.floor(random() * 3); n > 0; n--) {
          const past = new Set(replica.applied);
          const length = replica.doc.text.length;
          const ops: TextOp[] = [];
          if (random() < 0.3 && length > 0) {
            const at = Math.floor(random() * length);
            const count = 1 + Math.floor(random() * Math.min(3, length - at));
            ops.push(...replica.doc.delete(at, count));
          } else {
            const at = Math.floor(random() * (length + 1));
            const word = "abcdefgh".slice(0, 1 + Math.floor(random() * 3));
            const clock = replica.doc.nextClock(replica.session);
            ops.push(replica.doc.insert(at, word, replica.session, clock));
          }
          const edit = record(replica.session, ops, past);
          replica.applied.add(edit.id);
          decisions.set(edit.id, true);
        }
      } else if (pick < 0.7) {
        // A hostile block of one to three inserts made from this replica's document: origins in
        // order, mostly not neighbours. Each follows the block's earlier edits, or (sometimes)
        // not: then their characters are concurrent to it.
        const session = `h${edits.length}`;
        const scratch = TextDoc.fromRuns(replica.doc.runs());
        const block: number[] = [];
        for (let n = 1 + Math.floor(random() * 3); n > 0; n--) {
          const ids = charIds(scratch);
          const leftAt = Math.floor(random() * (ids.length + 1)) - 1; // -1: the start
          const gap = random() < 0.2 ? 0 : 1 + Math.floor(random() * 3);
          const rightAt = Math.min(ids.length, leftAt + 1 + gap); // ids.length: the end
          const op: TextOp = {
            kind: "insert",
            clock: scratch.nextClock(session),
            text: random() < 0.5 ? "!" : "!?",
            left: leftAt < 0 ? null : ids[leftAt],
            right: rightAt === ids.length ? null : ids[rightAt],
          };
          scratch.apply(op, session);
          const past = new Set(replica.applied);
          if (random() < 0.8) { for (const earlier of block) past.add(earlier); }
          // Sometimes it claims not to have seen an edit (and what followed it) that it names.
          if (random() < 0.2) forget(past, [...past][Math.floor(random() * past.size)], edits);
          block.push(edits.length);
          record(session, [op], past, block);
        }
      } else {
        receive(replica, 0.6);
      }
    }
    for (let progress = true; progress;) {
      const before = replicas.map((r) => r.applied.size + r.refused.size);
      for (const replica of replicas) receive(replica, 1);
      progress = replicas.some((r, i) => r.applied.size + r.refused.size > before[i]);
    }
    for (const replica of replicas) {
      assert.equal(
        replica.applied.size + replica.refused.size,
        edits.length,
        `${where}: all tried`,
      );
      assert.equal(
        replica.doc.text,
        replicas[0].doc.text,
        `${where}: ${replica.session} converges`,
      );
      assert.equal(order(replica.doc), order(replicas[0].doc), `${where}: same order`);
    }
    for (const edit of edits) {
      if (edit.block === undefined) continue;
      if (decisions.get(edit.id)) acceptedHostile++;
      else refusedHostile++;
    }
  }
  // Both outcomes were exercised: neighbours (or a gap of concurrent text only) are accepted.
  assert.ok(refusedHostile > 0 && acceptedHostile > 0, `${refusedHostile} / ${acceptedHostile}`);
});
