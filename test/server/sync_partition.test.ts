/**
 * Partition and reconnect fuzz (Deno and Node): several databases sync through a real server
 * while sockets are cut at random moments (mid catch-up included: frames are small), the server
 * restarts on its directory, clients go offline and write, and stored clients restart. Every
 * schedule ends with every replica identical to a reference merge of all blocks written, and
 * holding every block any replica wrote.
 *
 * CAIRN_FUZZ=N runs N schedules (default 200); CAIRN_FUZZ_SEED=S replays one run.
 */
import { test } from "node:test";
import { join } from "node:path";
import { Cairn } from "../../src/db/database.ts";
import type { RepositoryHandle } from "../../src/db/repository_handle.ts";
import { type SyncLink, syncWith } from "../../src/sync/client.ts";
import { openWebSocket, type SyncSocket } from "../../src/sync/socket.ts";
import { createSyncServer, type SyncServer } from "../../src/sync/server/create_server.ts";
import { envInteger } from "../harness/peers.ts";
import {
  assertConverged,
  closeReplicas,
  Note,
  Random,
  referenceMerge,
  sameVector,
  write,
} from "../harness/sync_fuzz.ts";
import { withTempDirectory } from "../harness/temp_directory.ts";

const PATH = "/data/notes";
const SCHEDULES = envInteger("CAIRN_FUZZ") ?? 200;
const SEED = envInteger("CAIRN_FUZZ_SEED") ?? 20261126;
/** Small frames and credit make catch-up many frames long, so cuts land in the middle of it. */
const MAX_FRAME = 4096;
const LINK_OPTIONS = { maxFrame: MAX_FRAME, backoff: { initialMs: 1, maxMs: 20 } };

/** A socket factory whose sockets the test can cut: each closes after a chosen message. */
class Cutter {
  readonly #sockets = new Set<SyncSocket>();

  readonly open = (url: string, maxFrame: number): SyncSocket => {
    const socket = openWebSocket(url, maxFrame);
    this.#sockets.add(socket);
    return socket;
  };

  /** Closes every open socket once it has received `after` more messages (0: now). */
  cut(after: number): void {
    for (const socket of this.#sockets) {
      this.#sockets.delete(socket);
      if (after === 0) {
        socket.close();
        continue;
      }
      let left = after;
      const deliver = socket.onmessage;
      // The client sets onmessage once per socket, before any message arrives: wrap it.
      socket.onmessage = (event) => {
        deliver?.(event);
        if (--left === 0) socket.close();
      };
    }
  }
}

interface Replica {
  readonly name: string;
  /** Set for a replica stored on disk, which can restart. */
  readonly path: string | undefined;
  secretKey: Uint8Array | undefined;
  db: Cairn;
  repo: RepositoryHandle;
  link: SyncLink | undefined;
  readonly cutter: Cutter;
}

async function openReplica(replica: Replica, url: string, online: boolean): Promise<void> {
  replica.db = await Cairn.open({
    schemas: [Note],
    ...(replica.path ? { path: replica.path } : { secretKey: replica.secretKey }),
  });
  replica.secretKey = replica.db.exportSecretKey();
  replica.repo = await replica.db.open(PATH);
  replica.link = online ? connect(replica, url) : undefined;
}

function connect(replica: Replica, url: string): SyncLink {
  return syncWith(replica.db, url, LINK_OPTIONS, { socket: replica.cutter.open });
}

async function settle(replicas: readonly Replica[], reference: { versionVector: object }) {
  // Every replica has pushed all it holds and caught up; then waits for the others' last blocks.
  await Promise.all(replicas.map(({ link }) => link!.synced()));
  for (let i = 0; i < 2000; i++) {
    if (replicas.every(({ repo }) => sameVector(repo.versionVector(), reference.versionVector))) {
      return;
    }
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

async function schedule(seed: number, dir: string): Promise<void> {
  const random = new Random(seed);
  const serverDir = join(dir, "server");
  let server: SyncServer = await createSyncServer({
    dir: serverDir,
    port: 0,
    open: true,
    maxFrame: MAX_FRAME,
  });
  const port = server.port;
  const replicas: Replica[] = [];
  const counter = { n: 0 };
  try {
    const count = random.int(2, 4);
    for (let i = 0; i < count; i++) {
      const replica = {
        name: String.fromCharCode(97 + i),
        path: random.bool(0.5) ? join(dir, `replica-${i}`) : undefined,
        cutter: new Cutter(),
      } as Replica;
      await openReplica(replica, server.url, true);
      replicas.push(replica);
    }
    const steps = random.int(10, 40);
    for (let step = 0; step < steps; step++) {
      const replica = random.pick(replicas);
      const roll = random.next();
      if (roll < 0.55) {
        for (let k = random.int(1, 5); k > 0; k--) write(random, replica, counter);
      } else if (roll < 0.7) {
        replica.cutter.cut(random.int(0, 6)); // now, or a few frames into what comes next
      } else if (roll < 0.78) {
        // Offline: the link is closed; writes go on; a later step (or the end) reconnects.
        await replica.link?.close();
        replica.link = undefined;
      } else if (roll < 0.86) {
        replica.link ??= connect(replica, server.url);
      } else if (roll < 0.93 && replica.path) {
        // An app restart: what was written offline must still reach the server afterwards.
        await replica.link?.close();
        await replica.db.close();
        await openReplica(replica, server.url, random.bool(0.7));
      } else if (roll >= 0.93) {
        await server.close();
        server = await createSyncServer({ dir: serverDir, port, open: true, maxFrame: MAX_FRAME });
      }
      // Let some frames move between steps, sometimes none.
      if (random.bool(0.5)) await new Promise((resolve) => setTimeout(resolve, random.int(0, 5)));
    }
    for (const replica of replicas) replica.link ??= connect(replica, server.url);
    const reference = await referenceMerge(replicas, PATH);
    await settle(replicas, reference);
    assertConverged(replicas, reference);
  } finally {
    await closeReplicas(replicas);
    await server.close();
  }
}

test(
  `sync converges through cut sockets, server restarts, offline writes and app restarts (${SCHEDULES} schedules)`,
  {
    timeout: 600_000,
  },
  async () => {
    for (let i = 0; i < SCHEDULES; i++) {
      const seed = SEED + i;
      try {
        await withTempDirectory("sync-partition", (dir) => schedule(seed, dir));
      } catch (err) {
        throw new Error(`schedule failed; replay with CAIRN_FUZZ_SEED=${seed} CAIRN_FUZZ=1`, {
          cause: err,
        });
      }
    }
  },
);
