/**
 * Yjs as a text contender: a `Y.Doc` per replica with one `Y.Text` ("body"), UTF-16 positions.
 * Each replica listens to its updates as an app persisting or sending them does, and counts the
 * bytes of those its own transactions produce; nothing is stored. Peers exchange
 * `encodeStateAsUpdate(doc, theirStateVector)`.
 *
 * Client ids come from a fixed seed. Yjs draws them at random from 32 bits and writes them as
 * varints in every update, so their length moves the byte rows by several percent from run to
 * run; here they repeat, always taking 5 bytes, as 15 in 16 random ones do.
 */
import * as Y from "yjs";
import { xorshift32 } from "../lib/items.ts";
import type { Patch } from "../lib/traces.ts";
import { InMemoryReplica, type Stored, type TextEngine, type TextReplica } from "./text_engine.ts";

const FIELD = "body";

class YjsReplica extends InMemoryReplica implements TextReplica {
  readonly doc = new Y.Doc();
  readonly #text = this.doc.getText(FIELD);

  constructor(clientID: number) {
    super();
    this.doc.clientID = clientID;
    this.doc.on(
      "update",
      (update: Uint8Array, _origin: unknown, _doc: Y.Doc, tr: Y.Transaction) => {
        if (tr.local) this.ownUpdateBytes += update.byteLength;
      },
    );
  }

  get peer(): string {
    return String(this.doc.clientID);
  }

  edit(patches: readonly Patch[]): void {
    this.doc.transact(() => {
      for (const [pos, del, ins] of patches) {
        if (del > 0) this.#text.delete(pos, del);
        if (ins) this.#text.insert(pos, ins);
      }
    });
  }

  text(): string {
    return this.#text.toString();
  }

  diff(peer: TextReplica): Promise<Uint8Array[]> {
    const theirs = Y.encodeStateVector((peer as YjsReplica).doc);
    return Promise.resolve([Y.encodeStateAsUpdate(this.doc, theirs)]);
  }

  apply(messages: readonly Uint8Array[]): Promise<void> {
    this.doc.transact(() => {
      for (const update of messages) Y.applyUpdate(this.doc, update);
    });
    return Promise.resolve();
  }

  store(): Promise<Stored> {
    const encoded = Y.encodeStateAsUpdate(this.doc);
    const historyBytes = this.ownUpdateBytes;
    this.doc.destroy();
    return Promise.resolve({
      historyBytes,
      snapshotBytes: encoded.byteLength,
      load() {
        const doc = new Y.Doc();
        Y.applyUpdate(doc, encoded);
        const text = doc.getText(FIELD).toString();
        return Promise.resolve({ text, close: () => Promise.resolve(doc.destroy()) });
      },
    });
  }

  close(): Promise<void> {
    this.doc.destroy();
    return Promise.resolve();
  }
}

/** Seeded client ids of 5 varint bytes (2^28 and over), distinct for an engine's replicas. */
function clientIds(): () => number {
  const next = xorshift32(0x2f6b_9e1d);
  return () => (next() | 0x1000_0000) >>> 0;
}

export function yjsEngine(): TextEngine {
  const nextId = clientIds();
  // A Y.Text exists as soon as it is named: creating and joining are the same.
  const replica = () => Promise.resolve(new YjsReplica(nextId()));
  return { units: "utf16", create: replica, join: replica };
}
