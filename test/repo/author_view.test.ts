/**
 * CommitView against the definition: a character was seen by a commit's author exactly when the
 * commit that inserted it is the commit itself or one of its ancestors (for a base text's
 * characters: when the commit or an ancestor carries that base). Random histories of one item,
 * random sets of commits held, each asked about every character held.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { type Commit, commitId, makeCommit } from "../../src/core/commit.ts";
import { baseSession } from "../../src/core/text/text_doc.ts";
import type { TextOp } from "../../src/core/text/text_ops.ts";
import { CommitView, ViewMemos, type ViewSources } from "../../src/repo/author_view.ts";
import { BlockVerifier, type VerifierHost } from "../../src/repo/block_verifier.ts";
import { CommitGraph } from "../../src/repo/commit_graph.ts";
import { envInteger } from "../harness/peers.ts";
import { seededRandom } from "../harness/random.ts";

const ROUNDS = envInteger("CAIRN_VIEW_FUZZ") ?? 300;
const SEED = envInteger("CAIRN_VIEW_FUZZ_SEED") ?? 20261128;
const BASE = "old text";

/** What a view reads: the `applied` commits (their leaves worked out), the block's `earlier` ones. */
function sources(
  applied: readonly Commit[],
  earlier: ReadonlyMap<string, Commit>,
  opsOf: (commit: Commit) => readonly TextOp[],
  memos: ViewMemos,
): ViewSources {
  const leaves = applied.filter((c) =>
    !applied.some((child) => child.parents.includes(commitId(c)))
  );
  return {
    leaves: () => leaves,
    get: (id) => applied.find((c) => commitId(c) === id),
    entered: () => applied.length + earlier.size,
    earlier,
    opsOf,
    memos,
  };
}

test(`CommitView: a character is seen exactly when its commit is an ancestor, in random histories (${ROUNDS} rounds, seed ${SEED})`, () => {
  let seen = 0;
  let unseen = 0;
  for (let round = 0; round < ROUNDS; round++) {
    const seed = SEED + round;
    const random = seededRandom(seed);
    const commits: Commit[] = [];
    const ops = new Map<Commit, TextOp[]>();
    const clocks = new Map<string, number>();
    const size = 3 + Math.floor(random() * 40);
    for (let i = 0; i < size; i++) {
      const session = `s${Math.floor(random() * 3)}`;
      const parents = new Set<string>();
      for (let n = Math.floor(random() * 3); n > 0 && commits.length > 0; n--) {
        parents.add(commitId(commits[Math.floor(random() * commits.length)]));
      }
      const seq = commits.filter((c) => c.session === session).length + 1;
      // Stamps grow with i: a parent is always stamped before its child.
      const commit = makeCommit(session, seq, "d", 1000 + i, [...parents], "x", "delta", {}, []);
      const clock = clocks.get(session) ?? 1;
      const text = "ab".slice(0, 1 + Math.floor(random() * 2));
      clocks.set(session, clock + text.length);
      const made: TextOp[] = [{ kind: "insert", clock, text, left: null, right: null }];
      if (random() < 0.1) made.push({ kind: "base", text: BASE });
      ops.set(commit, made);
      commits.push(commit);
    }
    const byId = new Map(commits.map((c) => [commitId(c), c]));
    const ancestors = (commit: Commit): Set<Commit> => {
      const found = new Set<Commit>();
      const queue = [...commit.parents];
      while (queue.length > 0) {
        const parent = byId.get(queue.pop()!)!;
        if (found.has(parent)) continue;
        found.add(parent);
        queue.push(...parent.parents);
      }
      return found;
    };
    // The commit asked about, and a held set: its ancestors and any other commits whose parents
    // are held (as a replica holds them), some of them the block's earlier commits.
    const asked = commits[Math.floor(random() * commits.length)];
    const followed = ancestors(asked);
    const held = new Set<Commit>();
    for (const commit of commits) {
      if (commit === asked) continue;
      const ready = commit.parents.every((p) => held.has(byId.get(p)!));
      if (ready && (followed.has(commit) || random() < 0.6)) held.add(commit);
    }
    const where = `seed ${seed}`;
    const carriesBase = (commit: Commit) => ops.get(commit)!.some((op) => op.kind === "base");
    const memos = new ViewMemos({ watch() {}, unwatch() {} });
    /**
     * Asks a view of `commit` about every character `held` has, some held as its block's (or,
     * not `asking`, only makes the view, as a commit that only deletes does).
     * Answers for the `field` asked about.
     */
    const check = (commit: Commit, held: ReadonlySet<Commit>, asking = true, field = "body") => {
      const followed = ancestors(commit);
      const earlier = new Map<string, Commit>();
      const applied = new Set<Commit>();
      for (const other of held) {
        if (random() < 0.2 && [...held].every((c) => !c.parents.includes(commitId(other)))) {
          earlier.set(commitId(other), other);
        } else applied.add(other);
      }
      const opsOf = (made: Commit) => ops.get(byId.get(commitId(made))!) ?? [];
      const view = new CommitView(commit, sources([...applied], earlier, opsOf, memos))
        .field(field);
      if (!asking) return;
      for (const made of [...held, commit]) {
        for (const op of ops.get(made)!) {
          if (op.kind !== "insert") continue;
          const expected = made === commit || followed.has(made);
          const end = op.clock + op.text.length;
          assert.equal(
            view.sawAny(made.session, op.clock, end),
            expected,
            `${where}: ${commitId(commit)} saw ${commitId(made)}`,
          );
          if (expected) seen++;
          else unseen++;
        }
      }
      if ([...held].some(carriesBase)) {
        const sawBase = carriesBase(commit) || [...followed].some(carriesBase);
        assert.equal(view.sawAny(baseSession(BASE), 1, 1 + BASE.length), sawBase, `${where}`);
      }
    };
    check(asked, held);
    // Then a commit whose only parent is that one, or with the same parents: the view worked
    // out for it may be taken over, unless something else entered meanwhile (sometimes it does).
    held.add(asked);
    const add = (parents: string[]) => {
      const session = `s${Math.floor(random() * 3)}`;
      const seq = commits.filter((c) => c.session === session).length + 1;
      const commit = makeCommit(
        session,
        seq,
        "d",
        1000 + commits.length,
        parents,
        "x",
        "delta",
        {},
        [],
      );
      const clock = clocks.get(session) ?? 1;
      clocks.set(session, clock + 1);
      ops.set(commit, [{ kind: "insert", clock, text: "c", left: null, right: null }]);
      commits.push(commit);
      byId.set(commitId(commit), commit);
      return commit;
    };
    if (random() < 0.5) {
      const others = [...held];
      held.add(add([commitId(others[Math.floor(random() * others.length)])]));
    }
    // A child or a sibling of `last`.
    const after = (last: Commit) => random() < 0.5 ? [commitId(last)] : [...last.parents];
    let last = asked;
    if (random() < 0.5) {
      // One in between whose view asks nothing.
      last = add(after(asked));
      check(last, held, false);
      held.add(last);
    }
    // Every commit edits both fields alike (opsOf ignores the field): the last one asks about a
    // field no view asked about before, whose answer comes from the commits taken over.
    check(add(after(last)), held, true, random() < 0.5 ? "body" : "note");
  }
  assert.ok(seen > 0 && unseen > 0, `${seen} seen, ${unseen} unseen`);
});

test("CommitView: what was worked out for a refused commit is not taken over by another commit with its id", () => {
  const insert = (clock: number, text: string): TextOp[] => [
    { kind: "insert", clock, text, left: null, right: null },
  ];
  const made = new Map<Commit, readonly TextOp[]>();
  const commit = (session: string, seq: number, hlc: number, parents: string[], ops: TextOp[]) => {
    const c = makeCommit(session, seq, "d", hlc, parents, "x", "delta", {}, []);
    made.set(c, ops);
    return c;
  };
  const root = commit("h", 1, 1, [], insert(1, "0123"));
  const typed = commit("a", 1, 2, [commitId(root)], insert(1, "QQQQ"));
  // Refused (say its edit skipped text its author had): its view found "typed" concurrent.
  const decoy = commit("c", 1, 3, [commitId(root)], insert(1, "x"));
  // Its signer's next block at that seq: "c.1" follows "typed" now, and "c.2" follows it.
  const real = commit("c", 1, 3, [commitId(typed)], []);
  const next = commit("c", 2, 4, [commitId(real)], insert(1, "x"));
  const memos = new ViewMemos({ watch() {}, unwatch() {} });
  const opsOf = (c: Commit) => made.get(c)!;
  const applied = [root, typed];
  const decoyView = new CommitView(decoy, sources(applied, new Map(), opsOf, memos)).field("body");
  assert.equal(decoyView.sawAny("a", 1, 5), false);
  const block = new Map<string, Commit>();
  new CommitView(real, sources(applied, block, opsOf, memos)).field("body");
  block.set(commitId(real), real);
  const view = new CommitView(next, sources(applied, block, opsOf, memos)).field("body");
  assert.equal(view.sawAny("a", 1, 5), true, "its author had seen what its parent followed");
});

test("BlockVerifier.viewOf (a held-back commit released, already in the graph) leaves no view for its item's next commit to take over", () => {
  const made = new Map<Commit, TextOp[]>();
  const typed = (session: string, seq: number, hlc: number, parents: Commit[], text: string) => {
    const commit = makeCommit(session, seq, "d", hlc, parents.map(commitId), "x", "delta", {}, []);
    made.set(commit, [{ kind: "insert", clock: seq, text, left: null, right: null }]);
    return commit;
  };
  const graph = new CommitGraph();
  let leaves: Commit[] = [];
  const host = {
    graph,
    leaves: () => leaves,
    texts: { opsOf: (c: Commit) => made.get(c) ?? [] },
  } as unknown as VerifierHost;
  const verifier = new BlockVerifier(host);
  const root = typed("p", 1, 1, [], "ab");
  graph.add(root);
  leaves = [root];
  // W waited for lost history; released, it is added, then its texts are checked.
  const w = typed("w", 1, 2, [root], "c");
  graph.add(w);
  verifier.viewOf(w).field("body").sawAny("p", 1, 2);
  leaves = [w];
  // A peer's commit concurrent to W, whose check asks nothing (an insert at the start).
  const y = typed("y", 1, 3, [root], "XYZ");
  verifier.viewOf(y);
  graph.add(y);
  leaves = [w, y];
  // W's author's next commit: y is not in its past.
  const n = typed("w", 2, 4, [w], "d");
  assert.equal(verifier.viewOf(n).field("body").sawAll("y", 1, 4), false);
  assert.equal(verifier.viewOf(n).field("body").sawAny("y", 1, 4), false);
});
