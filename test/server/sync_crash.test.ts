/**
 * A sync server process killed with SIGKILL while a client pushes: every block it acknowledged
 * is in the repository after a restart on the same directory (an ack means durable). Seeded
 * kill delays (CAIRN_FUZZ=N rounds, CAIRN_FUZZ_SEED=S replays).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { type ChildProcess, spawn } from "node:child_process";
import process from "node:process";
import { seededRandom } from "../harness/random.ts";
import { runtimeCommand } from "../harness/runtime_command.ts";
import { asArrays, newSession, NOTE, RawClient, type TestSession } from "../harness/sync_client.ts";
import { withSyncServer } from "../harness/sync_server.ts";
import { withTempDirectory } from "../harness/temp_directory.ts";

const SERVER = "test/fixtures/sync_server.mjs";
const ROUNDS = Number(process.env.CAIRN_FUZZ ?? 6);
const SEED = Number(process.env.CAIRN_FUZZ_SEED ?? 20261126);
const REPO = "/data/crash";

/** Starts the server process and resolves with it and its URL once it listens. */
function startServer(dir: string): Promise<{ child: ChildProcess; url: string }> {
  return new Promise((resolve, reject) => {
    const [command, args] = runtimeCommand(SERVER, [dir]);
    const child = spawn(command, args, { stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    let errors = "";
    child.stdout!.setEncoding("utf8");
    child.stdout!.on("data", (chunk: string) => {
      out += chunk;
      const url = out.match(/ws:\/\/\S+/)?.[0];
      if (url) resolve({ child, url });
    });
    child.stderr!.on("data", (chunk) => (errors += chunk));
    child.on("error", reject);
    child.on("exit", (code) => reject(new Error(`server exited (${code}): ${errors}`)));
  });
}

/**
 * Pushes new blocks one per push, several in flight, until the server dies `delayMs` after the
 * first ack. Returns the blocks acknowledged and how many pushes were never answered.
 */
async function pushUntilKilled(
  url: string,
  child: ChildProcess,
  session: TestSession,
  backlog: Uint8Array[],
  delayMs: number,
): Promise<{ acked: Uint8Array[]; unanswered: number }> {
  const client = await RawClient.connect(url, session);
  const handle = await session.db.open(REPO);
  const sent = new Map<number, Uint8Array[]>();
  const acked: Uint8Array[] = [];
  let id = 0;
  let acks = 0;
  let dead = false;
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  void client.closed.then(() => (dead = true));
  let timer: ReturnType<typeof setTimeout> | undefined;
  const collect = (async () => {
    while (!dead) {
      const ack = await client.next("ack").catch(() => undefined);
      if (!ack) break;
      assert.equal(ack.rejected.length, 0, JSON.stringify(ack.rejected));
      acked.push(...sent.get(ack.id)!);
      acks++;
      timer ??= setTimeout(() => child.kill("SIGKILL"), delayMs);
    }
  })();
  const push = (frames: Uint8Array[]) => {
    sent.set(++id, frames);
    client.send({ type: "push", repo: REPO, id, frames });
  };
  if (backlog.length > 0) push(backlog);
  for (let n = 0; !dead && n < 5000; n++) {
    const since = handle.versionVector();
    handle.create(NOTE, { text: `note ${n}` });
    await handle.flush();
    push(await handle.exportBlocks(since));
    // A few pushes in flight at a time, so several share a durable write.
    if (id - acks > 8) await new Promise((resolve) => setTimeout(resolve, 1));
  }
  clearTimeout(timer);
  if (!dead) child.kill("SIGKILL");
  await exited;
  await collect;
  return { acked, unanswered: id - acks };
}

test("sync crash: a server killed with SIGKILL mid-push keeps every block it acknowledged", {
  timeout: 600_000,
}, async () => {
  const random = seededRandom(SEED);
  const session = await newSession();
  const ackedEver: Uint8Array[] = [];
  let backlog: Uint8Array[] = [];
  let killedMidPush = 0;
  await withTempDirectory("sync-crash", async (dir) => {
    for (let round = 0; round < ROUNDS; round++) {
      const delayMs = Math.floor(random() * 40);
      const { child, url } = await startServer(dir);
      const { acked, unanswered } = await pushUntilKilled(url, child, session, backlog, delayMs);
      if (unanswered > 0) killedMidPush++;
      assert.ok(acked.length > 0, `round ${round}: something was acknowledged`);
      ackedEver.push(...acked);
      // Restarted on the same directory: every acknowledged block is there.
      await withSyncServer({ open: true, dir }, async (server) => {
        const reader = await RawClient.connect(server.url);
        const { blocks, synced } = await reader.catchUp(REPO, { versionVector: {} });
        const stored = new Set(asArrays(blocks).map((block) => block.join(",")));
        for (const block of asArrays(ackedEver)) {
          assert.ok(
            stored.has(block.join(",")),
            `round ${round} (seed ${SEED}, delay ${delayMs} ms): an acknowledged block is missing`,
          );
        }
        // What the server lacks is pushed again next round, as a client does after reconnecting.
        backlog = await (await session.db.open(REPO)).exportBlocks(synced.versionVector ?? {});
        await reader.close();
      });
    }
    assert.ok(killedMidPush > 0, "some kill landed with pushes in flight");
  });
});
