/**
 * Cairn as a contender: how each Cairn profile opens a database, which engine features exist
 * today (detected, never assumed), and the one adapter every query row goes through.
 *
 * Switching rows on when #4 and #5 land needs no change here if their APIs match what is used
 * below (`Cairn.open({ path, format, durability })`, `repo.query({ where, sort })` returning
 * `{ results, close() }`); otherwise adjust `openOptions` / `openQuery` only.
 */
import { Cairn, defineSchema, type Item, type RepositoryHandle } from "../../src/mod.ts";
import { itemKey, itemValues } from "../lib/items.ts";
import type { Feature } from "../lib/types.ts";
import type { FreshReply, FreshRunner, FreshTask } from "../fresh/protocol.ts";
import { hasTextApi } from "./text_cairn.ts";

export type { Cairn, Item, RepositoryHandle };

export const ItemSchema = defineSchema({
  ns: "bench_item",
  version: 1,
  fields: {
    title: { type: "string", required: true },
    count: { type: "number", required: true },
    tags: { type: "set" },
  },
});

export type BenchItem = Item<typeof ItemSchema>;

/** The repository every Cairn side uses. */
export const REPO_PATH = "/bench/items";

interface ProfileOptions {
  trusted?: boolean;
  format?: "binary" | "jsonl";
  durability?: "relaxed" | "durable";
}

const PROFILES: Record<string, ProfileOptions> = {
  "cairn": { durability: "relaxed" },
  "cairn-trusted": { trusted: true, durability: "relaxed" },
  "cairn-durable": { durability: "durable" },
  "cairn-jsonl": { format: "jsonl", durability: "relaxed" },
};

export interface CairnCtx {
  contender: string;
  features: Record<Feature, boolean>;
  /** Opens a database as this contender is configured: on disk at a new place once storage exists. */
  openDb(location?: string): Promise<Cairn>;
  /** A new storage location (a directory, or an OPFS name), or undefined while Cairn has no storage. */
  newLocation(): string | undefined;
  heapBytes(): Promise<number | undefined>;
  /** Bytes of all files of a database at `location`. */
  storedBytes(location: string): Promise<number>;
  gc(): void;
  /**
   * Runs `task` on the database at `location` in a fresh process of this runtime; absent where
   * there is none (the browser).
   */
  inFreshProcess?(task: FreshTask, location: string): Promise<FreshReply>;
}

/** What the platform does for Cairn's sides: storage places, their files, memory figures. */
export interface CairnPlatform {
  storageLocation(): string;
  heapBytes(): Promise<number | undefined>;
  /** Size of each file in a storage location (a directory, an OPFS directory), by name. */
  fileSizes(location: string): Promise<Record<string, number>>;
  gc(): void;
  /** Starts fresh processes of this runtime (Deno and Node; absent in the browser). */
  freshProcess?: FreshRunner;
}

/** The options `Cairn.open` gets for a contender: the issue #4 shape, path only with storage. */
export function openOptions(contender: string, location: string | undefined): object {
  const profile = PROFILES[contender];
  if (!profile) throw new Error(`no Cairn profile ${contender}`);
  return location === undefined ? { trusted: profile.trusted } : { ...profile, path: location };
}

export function cairnCtx(
  contender: string,
  features: Record<Feature, boolean>,
  platform: CairnPlatform,
): CairnCtx {
  return {
    contender,
    features,
    openDb: (location) => Cairn.open(openOptions(contender, location) as never),
    newLocation: () => features.storage ? platform.storageLocation() : undefined,
    heapBytes: () => platform.heapBytes(),
    storedBytes: async (location) =>
      Object.values(await platform.fileSizes(location)).reduce((sum, size) => sum + size, 0),
    gc: () => platform.gc(),
    inFreshProcess: platform.freshProcess &&
      ((task, location) => platform.freshProcess!({ side: "cairn", task, contender, location })),
  };
}

/** A database and its bench repository. */
export async function openRepo(
  ctx: CairnCtx,
  location = ctx.newLocation(),
): Promise<{ db: Cairn; repo: RepositoryHandle; location: string | undefined }> {
  const db = await ctx.openDb(location);
  return { db, repo: await db.open(REPO_PATH), location };
}

/** Creates items [from, to) with their shared keys and waits until they are sealed. */
export async function fillRepo(repo: RepositoryHandle, from: number, to: number): Promise<void> {
  for (let i = from; i < to; i++) repo.create(ItemSchema, itemValues(i), { key: itemKey(i) });
  await repo.flush();
}

/**
 * Like fillRepo, but each item in a block of its own, as an app that saves every item as it is
 * made leaves its log: `flush()` seals what waits at once, so each create becomes one commit in
 * one signed block, their appends queued behind one another (awaited in slices, so that a failed
 * append stops the fill).
 */
export async function fillRepoBlockPerItem(
  repo: RepositoryHandle,
  from: number,
  to: number,
): Promise<void> {
  const SLICE = 1_000;
  for (let start = from; start < to; start += SLICE) {
    const appends: Promise<void>[] = [];
    for (let i = start; i < Math.min(to, start + SLICE); i++) {
      repo.create(ItemSchema, itemValues(i), { key: itemKey(i) });
      appends.push(repo.flush());
    }
    await Promise.all(appends);
  }
}

/**
 * A new repository holding `items` items, written and flushed, with the background work the
 * writing started settled: a stored repository starts a checkpoint once its log has grown enough
 * (on a browser page it is built in slices), and a setup's checkpoint is not the timed operation.
 */
export async function filledRepo(
  ctx: CairnCtx,
  items: number,
): Promise<{ db: Cairn; repo: RepositoryHandle; location: string | undefined }> {
  const opened = await openRepo(ctx);
  await fillRepo(opened.repo, 0, items);
  await opened.db.flush();
  return opened;
}

/**
 * Which features this build of Cairn has, found by trying them: storage means an item written
 * through `Cairn.open({ path })` is there after closing and opening again; queries mean
 * `repo.query` exists; text means an item's text field can be edited in place.
 */
export async function detectFeatures(
  location: string,
): Promise<{ features: Record<Feature, boolean>; notes: Partial<Record<Feature, string>> }> {
  const notes: Partial<Record<Feature, string>> = {};
  const storage = await hasStorage(location, (why) => (notes.storage = why));
  const text = await hasTextApi().catch((err) => {
    notes.text = `the text API failed: ${(err as Error)?.message ?? err}`;
    return false;
  });
  if (!text && !notes.text) notes.text = "items have no insertText/deleteText yet";
  return { features: { storage, query: await hasQuery(), text }, notes };
}

async function hasStorage(location: string, because: (why: string) => void): Promise<boolean> {
  try {
    const options = { path: location, durability: "durable" } as never;
    const first = await Cairn.open(options);
    (await first.open(REPO_PATH)).create(ItemSchema, itemValues(1), { key: "probe" });
    await first.close();
    const second = await Cairn.open(options);
    const found = (await second.open(REPO_PATH)).has("probe");
    await second.close();
    if (!found) because("an item written with { path } was gone after reopening");
    return found;
  } catch (err) {
    because(`Cairn.open({ path }) failed: ${(err as Error)?.message ?? err}`);
    return false;
  }
}

async function hasQuery(): Promise<boolean> {
  const db = await Cairn.open({ trusted: true });
  const repo = await db.open(REPO_PATH);
  const found = typeof (repo as unknown as { query?: unknown }).query === "function";
  await db.close();
  return found;
}

/** A filter on `count` (served by an index on both sides), optionally sorted by title. */
export interface QuerySpec {
  countBelow: number;
  sortByTitle?: boolean;
}

export interface OpenQuery {
  /** The current results (the query keeps them up to date as items change). */
  results(): readonly unknown[];
  close(): void;
}

interface QueryLike {
  readonly results: readonly unknown[];
  readonly ready?: Promise<unknown>;
  close(): void;
}

interface QueryingRepo {
  query(options: unknown): QueryLike;
  createIndex?(field: string): void;
}

/** Declares the index on `count` the filter rows use (issue #5's `repo.createIndex`). */
export function indexCount(repo: RepositoryHandle): void {
  (repo as unknown as QueryingRepo).createIndex?.("count");
}

/**
 * The one place that calls issue #5's `repo.query`, resolving once its results are complete (at
 * once on Deno and Node; a browser may scan in slices). A shape mismatch fails the row loudly.
 */
export async function openQuery(repo: RepositoryHandle, spec: QuerySpec): Promise<OpenQuery> {
  const query = (repo as unknown as QueryingRepo).query({
    schema: ItemSchema,
    where: { count: { lt: spec.countBelow } },
    ...(spec.sortByTitle ? { sortBy: "title" } : {}),
  });
  await query.ready;
  const read = () => {
    const results = query.results;
    if (!Array.isArray(results)) {
      throw new Error("repo.query(…).results is not an array: adjust bench/contenders/cairn.ts");
    }
    return results;
  };
  read();
  return { results: read, close: () => query.close() };
}
