/**
 * Tabs of one database on fake locks and a fake channel (test/tabs/, test/server/sync_tabs.test.ts):
 * each tab's environment, and in-memory databases standing for the stored one.
 */
import { Cairn, watchRepositories } from "../../src/db/database.ts";
import type { RepositoryHandle } from "../../src/db/repository_handle.ts";
import type { Repository } from "../../src/repo/repository.ts";
import type { Persister, TabEnvironment } from "../../src/tabs/tab_coordinator.ts";
import { FakeBroadcast } from "./fake_broadcast.ts";
import { FakeLocks } from "./fake_locks.ts";
import { Note, PATH } from "./linked_client.ts";
import { waitFor } from "./wait.ts";

export interface Fakes {
  locks: FakeLocks;
  channels: FakeBroadcast;
  refused: unknown[];
}

export function fakes(): Fakes {
  return { locks: new FakeLocks(), channels: new FakeBroadcast(), refused: [] };
}

export function environment(
  fake: Fakes,
  tab: string,
  extra: Partial<TabEnvironment> = {},
): TabEnvironment {
  return {
    directory: "cairn/db",
    locks: fake.locks.forTab(tab),
    openChannel: () => fake.channels.end(tab),
    now: () => Date.now(),
    visible: () => true,
    openPersister: () => Promise.reject(new Error(`tab ${tab} was not meant to lead`)),
    tookOver: () => {},
    servingFrom: () => {},
    onRefused: (err) => fake.refused.push(err),
    ...extra,
  };
}

export interface Opened {
  db: Cairn;
  notes: RepositoryHandle;
  repo: Repository;
}

/** A database (in memory, or stored at `path`), its handle of PATH and the Repository behind it. */
export async function openDatabase(secretKey?: Uint8Array, path?: string): Promise<Opened> {
  const db = await Cairn.open({ schemas: [Note], secretKey, path });
  let repo: Repository | undefined;
  watchRepositories(db, { opened: (r) => repo ??= r, closed: () => {} });
  const notes = await db.open(PATH);
  return { db, notes, repo: repo! };
}

/**
 * The database a leader serves from, standing for the stored one: `persist` stands for a
 * repository's log flush, `flush` for the database's (by default `db.flush()`).
 */
export function persisting(
  db: Cairn,
  persist: () => Promise<void> = () => Promise.resolve(),
  flush: () => Promise<void> = () => db.flush(),
): Persister {
  return {
    flush,
    storedSecret: db.exportSecretKey(),
    repository: async (path) => {
      await db.open(path);
      let repo: Repository | undefined;
      watchRepositories(db, { opened: (r) => r.path === path && (repo ??= r), closed: () => {} })();
      return { repo: repo!, persist: () => persist() };
    },
    close: () => Promise.resolve(),
  };
}

/** `promise`'s outcome, or a failure naming `what` after waitFor's bound (never a hang). */
export async function settled<T>(promise: Promise<T>, what: string): Promise<T> {
  let done = false;
  const watched = promise.finally(() => done = true);
  watched.catch(() => {}); // a rejection is the caller's, once awaited below, not unhandled
  await waitFor(() => done, what);
  return await watched;
}

export function titles({ notes }: Opened): string[] {
  return [...notes.keys()].map((key) => notes.get(key, Note)!.get("title") as string).sort();
}
