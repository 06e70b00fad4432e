/**
 * What the sync fuzz tests share (the partition fuzz on one server, the PostgreSQL fuzz on
 * several): a seeded draw, random writes of every kind of field, and the reference merge every
 * replica must end identical to.
 */
import assert from "node:assert/strict";
import { Cairn } from "../../src/db/database.ts";
import type { RepositoryHandle } from "../../src/db/repository_handle.ts";
import { defineSchema } from "../../src/core/schema.ts";
import { seededRandom } from "./random.ts";

export const Note = defineSchema({
  ns: "note",
  version: 1,
  fields: {
    title: { type: "string", required: true },
    tags: { type: "set" },
    likes: { type: "counter" },
    body: { type: "text" },
  },
});

/** The few draws a schedule makes, from a seeded generator. */
export class Random {
  readonly next: () => number;
  constructor(seed: number) {
    this.next = seededRandom(seed);
  }
  /** An integer in [low, high]. */
  int(low: number, high: number): number {
    return low + Math.floor(this.next() * (high - low + 1));
  }
  bool(chance: number): boolean {
    return this.next() < chance;
  }
  pick<T>(items: readonly T[]): T {
    return items[this.int(0, items.length - 1)];
  }
}

/** A database taking part in a fuzz schedule. */
export interface FuzzReplica {
  readonly name: string;
  db: Cairn;
  repo: RepositoryHandle;
}

/** One random write: create, set, tag, like, edit text, or delete. */
export function write(random: Random, replica: FuzzReplica, counter: { n: number }): void {
  const keys = [...replica.repo.keys()];
  const n = counter.n++;
  const choice = keys.length === 0 ? 0 : random.int(0, 6);
  if (choice === 0) {
    replica.repo.create(Note, { title: `${replica.name}-${n}`, body: "start" });
    return;
  }
  const item = replica.repo.get(random.pick(keys), Note)!;
  const body = item.get("body") ?? "";
  switch (choice) {
    case 1:
      item.set("title", `${replica.name}-${n}`);
      break;
    case 2:
      item.set("tags", new Set([`t${random.int(0, 3)}`, `t${random.int(0, 3)}`]));
      break;
    case 3:
      item.set("likes", (item.get("likes") ?? 0) + 1);
      break;
    case 4:
      item.insertText("body", random.int(0, body.length), `<${replica.name}${n}>`);
      break;
    case 5:
      if (body.length > 0) {
        const at = random.int(0, body.length - 1);
        item.deleteText("body", at, random.int(1, body.length - at));
      }
      break;
    default:
      item.delete();
  }
}

/** Every item's values, in key order: what replicas must agree on. */
export function contents(repo: RepositoryHandle): [string, unknown][] {
  return [...repo.keys()].sort().map((key) => {
    const values = repo.get(key, Note)!.toObject();
    return [key, { ...values, tags: values.tags && [...values.tags].sort() }];
  });
}

/** What merging every block any replica holds gives, computed by a database that saw no sync. */
export async function referenceMerge(replicas: readonly FuzzReplica[], path: string) {
  const reference = await Cairn.open({ schemas: [Note] });
  for (const { db } of replicas) await reference.trust(db.session.publicKey);
  const repo = await reference.open(path);
  for (const { repo: source } of replicas) {
    const report = await repo.importBlocks(await source.exportBlocks(repo.versionVector()));
    assert.deepEqual(report.rejected, []);
  }
  const merged = { contents: contents(repo), versionVector: repo.versionVector() };
  await reference.close();
  return merged;
}

/** Every replica holds every block written and the reference's contents. */
export function assertConverged(
  replicas: readonly FuzzReplica[],
  reference: Awaited<ReturnType<typeof referenceMerge>>,
): void {
  for (const replica of replicas) {
    assert.deepEqual(
      replica.repo.versionVector(),
      reference.versionVector,
      `replica ${replica.name} holds every block written`,
    );
    assert.deepEqual(contents(replica.repo), reference.contents, `replica ${replica.name}`);
  }
}

/** Closes each replica's link (if it has one) and database. */
export async function closeReplicas(
  replicas: readonly (FuzzReplica & { link?: { close(): Promise<void> } })[],
): Promise<void> {
  for (const replica of replicas) {
    await replica.link?.close();
    await replica.db.close();
  }
}

export function sameVector(a: object, b: object): boolean {
  return JSON.stringify(Object.entries(a).sort()) === JSON.stringify(Object.entries(b).sort());
}
