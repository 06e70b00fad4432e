/**
 * Two trusted writers gone bad (a stolen key, a buggy client) sign blocks whose commits are shaped
 * to hurt: parents of other items or none at all, merges of leaves, stamps out of order, values
 * of the wrong types, text edits naming characters that never existed, fields no schema has,
 * schemas nobody registered. For test/db/hostile_commits.test.ts and, stored,
 * test/server/hostile_stored.test.ts.
 */
import assert from "node:assert/strict";
import { Cairn, defineSchema, isCairnError, type RepositoryHandle } from "cairndb";
import { encodeBlockPayload, sealBlock, sessionIdFromPublicKey } from "../../src/core/block.ts";
import { type Commit, commitId, type FieldRecord, type WireValue } from "../../src/core/commit.ts";
import { toBase64Url } from "../../src/core/bytes.ts";
import type { SigningKey } from "../../src/core/signing.ts";
import { cryptoSuite } from "../../src/runtime/crypto_suite.ts";
import { seededRandom } from "./random.ts";
import { ALL_TYPES } from "./schemas.ts";

export const All = defineSchema(ALL_TYPES);
export const PATH = "/hostile";
const KEYS = ["a", "b", "c"];
const SCHEMAS = [All.id, All.id, All.id, "other@1", "all@2"];
/** The schemas of a stream whose items are all of the registered schema. */
const REGISTERED = [All.id];
const FIELDS = [...Object.keys(ALL_TYPES.fields), "stray"];

type Random = () => number;

const pick = <T>(random: Random, list: readonly T[]): T => list[Math.floor(random() * list.length)];

/** A clock for a text character, mostly small (likely to name one that exists). */
function clock(random: Random): number {
  return random() < 0.9 ? 1 + Math.floor(random() * 12) : pick(random, [0, -1, 2 ** 48, 1.5]);
}

/** A character: one of this writer's own, another session's, or a malformed one. */
function char(random: Random, sessions: readonly string[]): WireValue {
  const roll = random();
  if (roll < 0.5) return clock(random);
  if (roll < 0.8) return [pick(random, sessions), clock(random)];
  return pick(random, [null, "x", [], [""], [1, 2]]);
}

/** Text edits, mostly well formed: inserts, deletes, base texts. */
function textEdits(random: Random, sessions: readonly string[]): WireValue {
  const ops: WireValue[] = [];
  const count = 1 + Math.floor(random() * 3);
  for (let i = 0; i < count; i++) {
    const roll = random();
    if (roll < 0.55) {
      // A lone surrogate is rare: it does not survive encoding, so the block is refused at once.
      const text = random() < 0.02 ? "\ud800" : pick(random, ["x", "hi", "😀", "ab😀"]);
      ops.push([clock(random), text, char(random, sessions), char(random, sessions)]);
    } else if (roll < 0.8) ops.push([char(random, sessions), 1 + Math.floor(random() * 3)]);
    else if (roll < 0.9) ops.push([pick(random, ["base", "😀x"])]);
    else ops.push(anyWire(random, 1));
  }
  return ops;
}

function anyWire(random: Random, depth: number): WireValue {
  const roll = random();
  if (depth > 2 || roll < 0.5) {
    return random() < 0.02
      ? "\udc00"
      : pick(random, [null, true, 0, -1, 2 ** 40, 1.5, "", "s", "😀"]);
  }
  if (roll < 0.75) return [anyWire(random, depth + 1), anyWire(random, depth + 1)];
  const record: Record<string, WireValue> = {};
  record[pick(random, ["k", "", "n", "__proto__x"])] = anyWire(random, depth + 1);
  return record;
}

/** A value for `field`: its right wire form or something else. */
function fieldValue(random: Random, field: string, sessions: readonly string[]): WireValue {
  if (random() < 0.12) return anyWire(random, 0);
  switch (field) {
    case "title":
      return `t${Math.floor(random() * 100)}`;
    case "rank":
    case "due":
    case "likes":
      return Math.floor(random() * 50) - 10;
    case "done":
      return random() < 0.5;
    case "tags":
      return [pick(random, ["x", "y"]), pick(random, ["y", "z"])];
    case "meta":
      return { [pick(random, ["p", "q"])]: pick(random, [1, "v", null]) };
    case "notes":
      return random() < 0.85 ? textEdits(random, sessions) : [];
    default:
      return anyWire(random, 0);
  }
}

function record(random: Random, sessions: readonly string[], all: boolean): FieldRecord {
  const out: FieldRecord = {};
  for (const field of FIELDS) {
    if (all ? random() < 0.8 : random() < 0.3) out[field] = fieldValue(random, field, sessions);
  }
  return out;
}

/**
 * One writer's stream of hostile commits. `known` holds the accepted commits of every writer, per
 * key, so that its commits also follow or merge the other's (concurrent leaves).
 */
class HostileWriter {
  readonly #random: Random;
  readonly session: string;
  readonly #sessions: readonly string[];
  readonly #known: Map<string, Commit[]>;
  readonly #schemas: readonly string[];
  #seq = 0;
  #hlc = Date.now() * 1024;

  constructor(
    random: Random,
    session: string,
    other: string,
    known: Map<string, Commit[]>,
    schemas: readonly string[],
  ) {
    this.#schemas = schemas;
    this.#random = random;
    this.session = session;
    this.#sessions = [session, other, "b4se"];
    this.#known = known;
  }

  commits(): Commit[] {
    const random = this.#random;
    const commits: Commit[] = [];
    const inBlock = new Map<string, Commit[]>();
    const count = 1 + Math.floor(random() * 4);
    for (let i = 0; i < count; i++) {
      const key = random() < 0.95 ? pick(random, KEYS) : pick(random, ["", "x".repeat(300)]);
      const held = [...this.#known.get(key) ?? [], ...inBlock.get(key) ?? []];
      const parents = this.#parents(held);
      this.#hlc += random() < 0.95 ? 1 + Math.floor(random() * 5) : -3;
      const schema = pick(random, this.#schemas);
      const roll = random();
      const header = {
        session: this.session,
        seq: ++this.#seq,
        key,
        hlc: this.#hlc,
        parents,
        schema,
      };
      const commit: Commit = roll < 0.4 || parents.length === 0
        ? { ...header, kind: "value", value: record(random, this.#sessions, true) }
        : roll < 0.9
        ? {
          ...header,
          kind: "delta",
          set: record(random, this.#sessions, false),
          unset: random() < 0.2 ? [pick(random, FIELDS)] : [],
        }
        : { ...header, kind: "delete" };
      commits.push(commit);
      inBlock.set(key, [...inBlock.get(key) ?? [], commit]);
    }
    return commits;
  }

  #parents(held: readonly Commit[]): string[] {
    const random = this.#random;
    const roll = random();
    if (held.length === 0 || roll < 0.1) return [];
    const newest = held[held.length - 1];
    if (roll < 0.7) return [commitId(newest)];
    if (roll < 0.85) return [...new Set([commitId(newest), commitId(pick(random, held))])];
    if (roll < 0.9) return [commitId(newest), commitId(newest)];
    if (roll < 0.95) return [`${this.session}.${this.#seq + 50}`]; // not yet made
    const other = [...this.#known.values()].flat();
    return other.length > 0 ? [commitId(pick(random, other))] : [];
  }

  accepted(commits: readonly Commit[]): void {
    for (const commit of commits) {
      this.#known.set(commit.key, [...this.#known.get(commit.key) ?? [], commit]);
    }
  }

  /** A refused block's commit seqs are free again: its chain place is taken by the next one. */
  refused(commits: readonly Commit[]): void {
    this.#seq -= commits.length;
  }
}

/** What a repository holds, read every way; a read that fails says its CairnError code. */
export function everything(repo: RepositoryHandle): unknown {
  const keys = [...repo.keys()].sort();
  const items: Record<string, unknown> = {};
  for (const key of [...KEYS, ...keys]) {
    const read = (f: () => unknown) => {
      try {
        return f();
      } catch (err) {
        if (!isCairnError(err)) throw err;
        return `throws ${err.code}`;
      }
    };
    items[key] = {
      has: repo.has(key),
      leaves: [...repo.leaves(key)].sort(),
      typed: read(() => repo.get(key, All)?.toObject()),
      any: read(() => repo.get(key)?.toObject()),
    };
  }
  return { keys, count: read(() => repo.count()), items, vector: repo.versionVector() };

  function read(f: () => unknown) {
    try {
      return f();
    } catch (err) {
      if (!isCairnError(err)) throw err;
      return `throws ${err.code}`;
    }
  }
}

interface Chain {
  readonly key: SigningKey;
  readonly writer: HostileWriter;
  seq: number;
  prev: string;
}

/**
 * Two hostile writers' blocks, imported one at a time into a database (stored at `path` when
 * given) and, when accepted, into a witness in memory; after each, the two must read the same.
 * Returns how many blocks applied and what the database held at the end (`everything`).
 */
export async function hostileStream(
  seed: number,
  { withSchemas, onlyRegistered = false, path }: {
    withSchemas: boolean;
    /** Every commit under the registered schema: no item waits for one (the database checkpoints). */
    onlyRegistered?: boolean;
    path?: string;
  },
): Promise<{ applied: number; held: unknown }> {
  const random = seededRandom(seed);
  const suite = await cryptoSuite();
  const keys = [await suite.ed25519.generate(), await suite.ed25519.generate()];
  const sessions = await Promise.all(
    keys.map((key) => sessionIdFromPublicKey(key.publicKey, suite)),
  );
  const known = new Map<string, Commit[]>();
  const chains: Chain[] = keys.map((key, i) => ({
    key,
    writer: new HostileWriter(
      random,
      sessions[i],
      sessions[1 - i],
      known,
      onlyRegistered ? REGISTERED : SCHEMAS,
    ),
    seq: 1,
    prev: "",
  }));
  const trust = keys.map((key) => toBase64Url(key.publicKey));
  const schemas = withSchemas ? [All] : [];
  const target = await Cairn.open({ schemas, trust, path });
  const witness = await Cairn.open({ schemas, trust });
  const repo = await target.open(PATH);
  const clean = await witness.open(PATH);
  let applied = 0;
  for (let tries = 0; applied < 50 && tries < 500; tries++) {
    // Two writers, each mostly writing several blocks in a row: runs of concurrent history.
    const chain = chains[random() < 0.8 ? applied % 4 >> 1 : Math.floor(random() * 2)];
    const commits = chain.writer.commits();
    const sealed = await sealBlock(
      {
        session: chain.writer.session,
        publicKey: chain.key.publicKey,
        seq: chain.seq,
        prev: chain.prev,
        commits,
      },
      { key: chain.key, ed25519: suite.ed25519 },
      suite,
    );
    const frame = encodeBlockPayload(sealed.body, sealed.block.signature);
    const report = await repo.importBlocks([frame]);
    for (const { error } of report.rejected) {
      assert.ok(isCairnError(error), `seed ${seed}: ${error}`);
    }
    if (report.applied === 1) {
      applied++;
      chain.seq++;
      chain.prev = sealed.hash;
      chain.writer.accepted(commits);
      assert.equal((await clean.importBlocks([frame])).applied, 1, `seed ${seed}`);
    } else chain.writer.refused(commits);
    assert.deepEqual(everything(repo), everything(clean), `seed ${seed}, try ${tries}`);
  }
  const held = everything(repo);
  await target.close();
  await witness.close();
  return { applied, held };
}
