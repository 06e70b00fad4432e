/**
 * A leader tab's page closing its database (Cairn.close(): the coordinator stops serving, the
 * repositories are flushed and closed, then the coordinator closes) on a stored database: what
 * that close stores — the page's last write, a follower's push being written — still reaches the
 * other tabs, so none of them lacks a block the storage holds and refuses what builds on it.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { cryptoSuite } from "../../src/runtime/crypto_suite.ts";
import { TabCoordinator } from "../../src/tabs/tab_coordinator.ts";
import { tabSecret } from "../../src/tabs/tab_keys.ts";
import { Note } from "../harness/linked_client.ts";
import {
  environment,
  fakes,
  openDatabase,
  type Opened,
  persisting,
  settled,
  titles,
} from "../harness/tab_fakes.ts";
import { withTempDirectory } from "../harness/temp_directory.ts";
import { waitFor } from "../harness/wait.ts";

/** Tab a leads from the database stored at `dir`; b (next in line, opening it then) and c follow. */
async function threeTabs(dir: string) {
  const fake = fakes();
  const a = await openDatabase(undefined, dir);
  const secret = a.db.exportSecretKey();
  const ja = await TabCoordinator.join(environment(fake, "a"));
  ja.coordinator.lead(persisting(a.db, () => a.repo.flush()));
  let stored: Opened | undefined;
  const jb = await TabCoordinator.join(environment(fake, "b", {
    openPersister: async () => {
      stored = await openDatabase(undefined, dir);
      return persisting(stored.db, () => stored!.repo.flush());
    },
  }));
  const jc = await TabCoordinator.join(environment(fake, "c"));
  const suite = await cryptoSuite();
  const b = await openDatabase(await tabSecret(suite, secret, jb.coordinator.keyIndex));
  const c = await openDatabase(await tabSecret(suite, secret, jc.coordinator.keyIndex));
  const linkB = await jb.coordinator.follow(b.repo);
  await jc.coordinator.follow(c.repo);
  /** Closes tab a's database as Cairn.close() does in a tab. */
  const closeA = async () => {
    ja.coordinator.stopServing();
    await a.db.close();
    await ja.coordinator.close();
  };
  const end = async () => {
    for (const j of [jc, jb]) await j.coordinator.close();
    for (const { db } of [b, c, stored!]) await db.close();
    assert.deepEqual(fake.refused, []);
  };
  return { a, b, c, linkB, closeA, stored: () => stored, end };
}

test("the leader's last write, sealed by its page's close, reaches every tab", async () => {
  await withTempDirectory("tabs-leader-close", async (dir) => {
    const tabs = await threeTabs(dir);
    tabs.a.notes.create(Note, { title: "a's last write" });
    await tabs.closeA();
    await waitFor(() => tabs.stored() !== undefined, "b leads from the storage");
    await waitFor(
      () => titles(tabs.b).length === 1 && titles(tabs.c).length === 1,
      "a's last write in b and c",
    );
    assert.deepEqual(titles(tabs.stored()!), ["a's last write"]);
    // b, now leading, writes on: c takes it (no gap before it in anyone's history).
    tabs.b.notes.create(Note, { title: "b" });
    await waitFor(() => titles(tabs.c).length === 2, "b's write in c");
    await tabs.end();
  });
});

test("a follower's push being written when the leader's page closes reaches the other tabs, and so does what that follower writes next", async () => {
  await withTempDirectory("tabs-push-in-flight", async (dir) => {
    const tabs = await threeTabs(dir);
    let closing: Promise<void> | undefined;
    tabs.a.repo.onChange(() => {
      // Right after the push applied in a, its write handed to the log and not yet ended.
      closing ??= Promise.resolve().then(tabs.closeA);
    });
    tabs.b.notes.create(Note, { title: "b 1" });
    const flushed = tabs.linkB.flush();
    await waitFor(() => closing !== undefined, "a applied b's push");
    await closing;
    await settled(flushed, "b's write acknowledged (by b, now leading)");
    await waitFor(() => titles(tabs.c).includes("b 1"), "b 1 in c");
    tabs.b.notes.create(Note, { title: "b 2" });
    await waitFor(() => titles(tabs.c).includes("b 2"), "b 2 in c");
    assert.deepEqual(titles(tabs.stored()!), ["b 1", "b 2"]);
    await tabs.end();
  });
});
