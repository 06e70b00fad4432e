/**
 * Cairn as a text contender, signed or trusted (the profiles of cairn.ts): a database per replica
 * with one repository holding one item whose `text` field is edited in place (`replaceText`, the
 * one edit `insertText` and `deleteText` also make; UTF-16 positions). The rows await between
 * transactions, so each transaction is its own commit; how commits group into blocks is the
 * default sealing's (text_engine.ts, `Pace`). Peers exchange blocks
 * (`exportBlocks(theirVersionVector)`, `importBlocks`), trusting each other's keys first unless
 * trusted.
 */
import { Cairn, defineSchema, type Item, type RepositoryHandle } from "../../src/mod.ts";
import type { Patch } from "../lib/traces.ts";
import type { Stored, TextEngine, TextReplica } from "./text_engine.ts";

export const TextDoc = defineSchema({
  ns: "bench_text",
  version: 1,
  fields: { body: { type: "text" } },
});

/** The repository and the key of the one item every text row edits. */
export const TEXT_REPO = "/bench/text";
export const TEXT_KEY = "d";

type TextItem = Item<typeof TextDoc>;

/** How a Cairn text replica opens (its contender's profile), where it keeps its files, their sizes. */
export interface CairnTextEnv {
  /** `Cairn.open`'s options for the contender's profile, on disk at `location` if given. */
  openOptions(location: string | undefined): object;
  /** A new storage location, or undefined while this build of Cairn has no storage. */
  newLocation(): string | undefined;
  fileSizes(location: string): Promise<Record<string, number>>;
}

async function openReplica(env: CairnTextEnv, location?: string) {
  const db = await Cairn.open(env.openOptions(location) as never);
  db.register(TextDoc);
  return { db, repo: await db.open(TEXT_REPO) };
}

class CairnReplica implements TextReplica {
  readonly #db: Cairn;
  readonly #repo: RepositoryHandle;
  readonly #env: CairnTextEnv;
  readonly #location: string | undefined;
  readonly #accepted: Set<string>;
  #item: TextItem | undefined;

  constructor(db: Cairn, repo: RepositoryHandle, env: CairnTextEnv, location?: string) {
    this.#db = db;
    this.#repo = repo;
    this.#env = env;
    this.#location = location;
    this.#accepted = new Set([db.session.publicKey]);
  }

  /** Creates the item (an empty text) this replica and its peers edit. */
  createDocument(): void {
    this.#item = this.#repo.create(TextDoc, { body: "" }, { key: TEXT_KEY });
  }

  get peer(): string {
    return this.#db.session.publicKey;
  }

  get #doc(): TextItem {
    this.#item ??= this.#repo.get(TEXT_KEY, TextDoc);
    if (!this.#item) throw new Error("this replica holds no document yet: sync it from a peer");
    return this.#item;
  }

  edit(patches: readonly Patch[]): void {
    const doc = this.#doc;
    for (const [pos, del, ins] of patches) doc.replaceText("body", pos, del, ins);
  }

  text(): string {
    return this.#doc.get("body") ?? "";
  }

  written(): Promise<void> {
    return this.#repo.flush();
  }

  diff(peer: TextReplica): Promise<Uint8Array[]> {
    return this.#repo.exportBlocks((peer as CairnReplica).#repo.versionVector());
  }

  async apply(messages: readonly Uint8Array[]): Promise<void> {
    const report = await this.#repo.importBlocks(messages);
    const refused = report.rejected[0];
    if (refused) {
      throw new Error(
        `${report.rejected.length} block(s) refused, the first: ${refused.error.message}`,
      );
    }
  }

  peers(): Iterable<string> {
    return this.#accepted;
  }

  async accept(peers: Iterable<string>): Promise<void> {
    for (const peer of peers) {
      if (this.#accepted.has(peer)) continue;
      // Trusted mode verifies nothing, so it has nobody to trust.
      if (!this.#db.trusted) await this.#db.trust(peer);
      this.#accepted.add(peer);
    }
  }

  /**
   * `db.flush()`: every block appended (on disk: fsynced once), and a checkpoint the writing
   * started in the background finished — that work is the writing's, not the next row's.
   */
  settle(): Promise<void> {
    return this.#db.flush();
  }

  async updateBytes(): Promise<number> {
    // Every other session as held, this one from its start: this replica's own blocks.
    const since = { ...this.#repo.versionVector(), [this.#db.session.id]: 0 };
    const frames = await this.#repo.exportBlocks(since);
    return frames.reduce((sum, frame) => sum + frame.byteLength, 0);
  }

  /** On disk already: closes it. In memory: imports its blocks into a new stored database. */
  async store(): Promise<Stored> {
    let location = this.#location;
    if (location === undefined) {
      location = this.#env.newLocation();
      if (location === undefined) throw new Error("this build of Cairn has no storage");
      const copy = await openReplica(this.#env, location);
      const replica = new CairnReplica(copy.db, copy.repo, this.#env, location);
      await replica.accept(this.#accepted);
      await replica.apply(await this.#repo.exportBlocks());
      await replica.close();
    }
    await this.close();
    const sizes = await this.#env.fileSizes(location);
    const sum = (suffix: string) =>
      Object.entries(sizes).reduce((n, [file, size]) => n + (file.endsWith(suffix) ? size : 0), 0);
    const env = this.#env;
    return {
      historyBytes: sum(".log"),
      snapshotBytes: sum(".ckpt"),
      async load() {
        const { db, repo } = await openReplica(env, location);
        const text = repo.get(TEXT_KEY, TextDoc)?.get("body") ?? "";
        return { text, close: () => db.close() };
      },
    };
  }

  close(): Promise<void> {
    return this.#db.close();
  }
}

export function cairnTextEngine(env: CairnTextEnv): TextEngine {
  return {
    units: "utf16",
    async create(options) {
      const location = options?.onDisk ? env.newLocation() : undefined;
      if (options?.onDisk && location === undefined) {
        throw new Error("this build of Cairn has no storage");
      }
      const { db, repo } = await openReplica(env, location);
      const replica = new CairnReplica(db, repo, env, location);
      replica.createDocument();
      await replica.settle();
      return replica;
    },
    async join() {
      const { db, repo } = await openReplica(env);
      return new CairnReplica(db, repo, env);
    },
  };
}

/** Whether this build of Cairn has the text API (issue #22): an item's text edited in place. */
export async function hasTextApi(): Promise<boolean> {
  const db = await Cairn.open({ trusted: true });
  try {
    const repo = await db.open(TEXT_REPO);
    const item = repo.create(TextDoc, { body: "" }, { key: TEXT_KEY });
    if (typeof item.replaceText !== "function") return false;
    item.insertText("body", 0, "ac");
    item.insertText("body", 1, "b");
    item.deleteText("body", 0, 1);
    return item.get("body") === "bc";
  } finally {
    await db.close();
  }
}
