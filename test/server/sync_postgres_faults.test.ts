/**
 * Faults under the PostgreSQL store: a server process killed with SIGKILL while a client pushes
 * (every block it acknowledged is served by another server, where the client resumes), and
 * PostgreSQL restarted while clients push and watch (every push is acknowledged, none refused,
 * and a watcher on another server ends with every block). Seeded kill delays (CAIRN_FUZZ=N
 * rounds, CAIRN_FUZZ_SEED=S replays).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { Child } from "../harness/child_process.ts";
import { envInteger } from "../harness/peers.ts";
import { withPostgresServers } from "../harness/postgres_servers.ts";
import { seededRandom } from "../harness/random.ts";
import { asArrays, blocksOf, newSession, RawClient } from "../harness/sync_client.ts";

const ROUNDS = envInteger("CAIRN_FUZZ") ?? 4;
const SEED = envInteger("CAIRN_FUZZ_SEED") ?? 20261126;
const RUNTIME = "Deno" in globalThis ? "deno" : "node";

/** Pushes `blocks` one per push, all in flight; resolves with the acks that came. */
async function pushAll(
  client: RawClient,
  repo: string,
  blocks: readonly Uint8Array[],
  onAck: (ack: { applied: number; duplicates: number; rejected: unknown[] }) => void = () => {},
): Promise<Uint8Array[]> {
  const sent = new Map<number, Uint8Array>();
  blocks.forEach((block, i) => {
    sent.set(i + 1, block);
    client.send({ type: "push", repo, id: i + 1, frames: [block] });
  });
  const acked: Uint8Array[] = [];
  while (acked.length < blocks.length) {
    const ack = await client.next("ack").catch(() => undefined);
    if (!ack) break; // the server is gone
    onAck(ack);
    acked.push(sent.get(ack.id)!);
  }
  return acked;
}

test(
  "postgres faults: a server SIGKILLed mid-push loses nothing it acknowledged; the client resumes on another",
  {
    timeout: 300_000,
  },
  async () => {
    const random = seededRandom(SEED);
    await withPostgresServers(async ({ cluster, server }) => {
      const survivor = await server();
      let killedMidPush = 0;
      for (let round = 0; round < ROUNDS; round++) {
        const repo = `/crash/${round}`;
        const session = await newSession();
        const blocks = await blocksOf(session, repo, 200);
        const doomed = new Child(RUNTIME, "test/fixtures/sync_server.mjs", [cluster.url]);
        const client = await RawClient.connect(await doomed.line("listening"), session);
        const delayMs = Math.floor(random() * 30);
        let timer: ReturnType<typeof setTimeout> | undefined;
        const acked = await pushAll(client, repo, blocks, () => {
          timer ??= setTimeout(() => doomed.kill(), delayMs);
        });
        clearTimeout(timer);
        doomed.kill();
        await doomed.exited;
        const where = `round ${round} (seed ${SEED}, kill ${delayMs} ms after the first ack)`;
        assert.ok(acked.length > 0, `${where}: something was acknowledged`);
        if (acked.length < blocks.length) killedMidPush++;
        // Another server serves every acknowledged block; the client pushes again what it holds.
        const moved = await RawClient.connect(survivor.url, session);
        const { blocks: stored, synced } = await moved.catchUp(repo, { versionVector: {} });
        const have = new Set(asArrays(stored).map(String));
        for (const block of asArrays(acked)) assert.ok(have.has(String(block)), where);
        let rejected = 0;
        await pushAll(moved, repo, blocks, (ack) => (rejected += ack.rejected.length));
        assert.equal(rejected, 0, where);
        const after = await moved.catchUp(`${repo}`, { cursor: synced.cursor });
        assert.equal(stored.length + after.blocks.length, blocks.length, where);
        await moved.close();
      }
    });
  },
);

test(
  "postgres faults: PostgreSQL restarted mid-sync: every push is acknowledged, watchers get every block",
  {
    timeout: 300_000,
  },
  async () => {
    await withPostgresServers(async ({ cluster, server }) => {
      const [a, b] = [await server(), await server()];
      const repo = "/restart/shared";
      const writer = await RawClient.connect(a.url);
      const watcher = await RawClient.connect(b.url);
      await watcher.catchUp(repo);
      const blocks = await blocksOf(writer.session, repo, 150);
      let rejected = 0;
      let applied = 0;
      const pushing = pushAll(writer, repo, blocks, (ack) => {
        rejected += ack.rejected.length;
        applied += ack.applied;
      });
      await cluster.restart();
      const acked = await pushing;
      assert.deepEqual([acked.length, applied, rejected], [blocks.length, blocks.length, 0]);
      // The watcher on the other server ends with every block, live or read again after the
      // notifications lost while PostgreSQL was down.
      const seen: Uint8Array[] = [];
      while (seen.length < blocks.length) {
        const live = await watcher.next("live");
        seen.push(...live.frames);
      }
      assert.deepEqual(new Set(asArrays(seen).map(String)), new Set(asArrays(blocks).map(String)));
      await Promise.all([writer.close(), watcher.close()]);
    });
  },
);
