/**
 * Automerge as a text contender: one document per replica, `{ body: string }` (a collaborative
 * text in Automerge 3), positions in Unicode code points (Automerge's JavaScript default). After
 * each change the replica takes that change's bytes (`getLastLocalChange`), as an app persisting
 * or sending changes does, and counts them; nothing is stored. Peers exchange exactly the changes
 * one has and the other lacks, found as `merge` finds them (`getChangesAdded` of the backend):
 * the public `getChanges(old, new)` sends the whole history again once the two have diverged.
 * The document lives in WebAssembly memory, which the heap figures of the memory rows do not see.
 */
import * as A from "@automerge/automerge";
import type { Patch } from "../lib/traces.ts";
import { InMemoryReplica, type Stored, type TextEngine, type TextReplica } from "./text_engine.ts";

type Body = { body: string };

const PATH = ["body"];

class AutomergeReplica extends InMemoryReplica implements TextReplica {
  doc: A.Doc<Body>;

  constructor(doc: A.Doc<Body>) {
    super();
    this.doc = doc;
  }

  get peer(): string {
    return A.getActorId(this.doc);
  }

  /** Counts the change just made (the document's creation included: it is history too). */
  countLastChange(): void {
    this.ownUpdateBytes += A.getLastLocalChange(this.doc)?.byteLength ?? 0;
  }

  edit(patches: readonly Patch[]): void {
    this.doc = A.change(this.doc, (d) => {
      for (const [pos, del, ins] of patches) A.splice(d, PATH, pos, del, ins);
    });
    this.countLastChange();
  }

  text(): string {
    return this.doc.body;
  }

  diff(peer: TextReplica): Promise<Uint8Array[]> {
    const theirs = A.getBackend((peer as AutomergeReplica).doc);
    return Promise.resolve(theirs.getChangesAdded(A.getBackend(this.doc)));
  }

  apply(messages: readonly Uint8Array[]): Promise<void> {
    [this.doc] = A.applyChanges(this.doc, messages as Uint8Array[]);
    return Promise.resolve();
  }

  store(): Promise<Stored> {
    const saved = A.save(this.doc);
    const historyBytes = this.ownUpdateBytes;
    A.free(this.doc);
    return Promise.resolve({
      historyBytes,
      snapshotBytes: saved.byteLength,
      load() {
        const doc = A.load<Body>(saved);
        const text = doc.body;
        return Promise.resolve({ text, close: () => Promise.resolve(A.free(doc)) });
      },
    });
  }

  close(): Promise<void> {
    A.free(this.doc);
    return Promise.resolve();
  }
}

export function automergeEngine(): TextEngine {
  return {
    units: "codepoints",
    create() {
      const replica = new AutomergeReplica(A.from<Body>({ body: "" }));
      replica.countLastChange();
      return Promise.resolve(replica);
    },
    join: () => Promise.resolve(new AutomergeReplica(A.init<Body>())),
  };
}
