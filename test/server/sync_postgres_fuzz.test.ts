/**
 * Three sync server processes on one PostgreSQL cluster, 30 databases syncing through them
 * (each client starts on one server and moves to another when its server dies), in seeded
 * schedules of random writes and reconnects; one schedule in ten (by seed) SIGKILLs a server
 * mid-way (and starts it again), and one in a hundred restarts PostgreSQL mid-way. Every schedule ends with every replica
 * identical to a reference merge of all blocks written, and holding every block any replica
 * wrote: nothing acknowledged is lost, and blocks pushed through one server reach the others'
 * clients. Each schedule has a repository of its own; servers and cluster live for the whole run.
 *
 * CAIRN_FUZZ=N runs N schedules (default 100); CAIRN_FUZZ_SEED=S replays from seed S.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { startPostgres } from "../../scripts/lib/postgres.ts";
import { Cairn } from "../../src/db/database.ts";
import { type SyncLink, syncWith } from "../../src/sync/client.ts";
import { openWebSocket, type SyncSocket } from "../../src/sync/socket.ts";
import { Child } from "../harness/child_process.ts";
import { envInteger } from "../harness/peers.ts";
import {
  assertConverged,
  closeReplicas,
  type FuzzReplica,
  Note,
  Random,
  referenceMerge,
  sameVector,
  write,
} from "../harness/sync_fuzz.ts";

const SCHEDULES = envInteger("CAIRN_FUZZ") ?? 100;
const SEED = envInteger("CAIRN_FUZZ_SEED") ?? 20261126;
const SERVERS = 3;
const CLIENTS = 30;
/**
 * Which schedules have which fault, by seed (so a replay of one seed has them too): with the
 * default seed, 10 kills and one PostgreSQL restart (schedule 5) in 100 schedules.
 */
const killsServer = (seed: number) => seed % 10 === 9;
const restartsPostgres = (seed: number) => seed % 100 === 31;
const LINK_OPTIONS = { backoff: { initialMs: 1, maxMs: 50 } };
const RUNTIME = "Deno" in globalThis ? "deno" : "node";

/** The server processes; clients are sent to the live ones. */
class Servers {
  readonly #url: string;
  readonly #running: ({ child: Child; url: string } | undefined)[] = [];
  /** Rejects when a server exits that the test did not kill. */
  readonly failed: Promise<never>;
  #fail!: (err: Error) => void;

  constructor(databaseUrl: string) {
    this.#url = databaseUrl;
    this.failed = new Promise((_, reject) => (this.#fail = reject));
    this.failed.catch(() => {});
  }

  async start(slot: number): Promise<void> {
    const child = new Child(RUNTIME, "test/fixtures/sync_server.mjs", [this.#url]);
    this.#running[slot] = { child, url: await child.line("listening") };
    void child.exited.then((code) => {
      if (this.#running[slot]?.child !== child) return;
      this.#fail(new Error(`server ${slot} exited (${code}) by itself:\n${child.stderr}`));
    });
  }

  /** SIGKILL: no goaway, no drain; its clients find another server. */
  async kill(slot: number): Promise<void> {
    const server = this.#running[slot]!;
    this.#running[slot] = undefined;
    server.child.kill();
    await server.child.exited;
  }

  /** The URL of a live server, the one `client` prefers when it is up. */
  urlFor(client: number): string {
    const live = this.#running.filter((server) => server !== undefined);
    return live[client % live.length]!.url;
  }

  async stopAll(): Promise<void> {
    for (let slot = 0; slot < this.#running.length; slot++) {
      if (this.#running[slot]) await this.kill(slot);
    }
  }
}

interface Replica extends FuzzReplica {
  readonly index: number;
  link: SyncLink | undefined;
  socket: SyncSocket | undefined;
}

function connect(replica: Replica, servers: Servers): SyncLink {
  // The link never dials the URL it is given: its socket seam picks a live server each time.
  return syncWith(replica.db, "ws://127.0.0.1:1", LINK_OPTIONS, {
    socket: (
      _url,
      maxFrame,
    ) => (replica.socket = openWebSocket(servers.urlFor(replica.index), maxFrame)),
  });
}

/** A hang guard, not a speed check: a schedule takes a second or two. */
const SETTLE_LIMIT_MS = 120_000;

async function settle(
  replicas: readonly Replica[],
  reference: { versionVector: object },
  servers: Servers,
) {
  let guard: ReturnType<typeof setTimeout> | undefined;
  await Promise.race([
    Promise.all(replicas.map(({ link }) => link!.synced())),
    servers.failed,
    new Promise((_, reject) => {
      guard = setTimeout(
        () => reject(new Error(`links not synced after ${SETTLE_LIMIT_MS} ms`)),
        SETTLE_LIMIT_MS,
      );
    }),
  ]).finally(() => clearTimeout(guard));
  for (let i = 0; i < 4000; i++) {
    if (replicas.every(({ repo }) => sameVector(repo.versionVector(), reference.versionVector))) {
      return;
    }
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

async function schedule(
  seed: number,
  servers: Servers,
  faults: { killServer: boolean; restartPostgres: () => Promise<void> | undefined },
): Promise<void> {
  const random = new Random(seed);
  const path = `/fuzz/${seed}`;
  const replicas: Replica[] = [];
  const counter = { n: 0 };
  try {
    for (let index = 0; index < CLIENTS; index++) {
      const db = await Cairn.open({ schemas: [Note] });
      const replica: Replica = {
        name: `c${index}`,
        index: index + seed,
        db,
        repo: await db.open(path),
        link: undefined,
        socket: undefined,
      };
      replica.link = connect(replica, servers);
      replicas.push(replica);
    }
    const steps = random.int(8, 20);
    const faultAt = random.int(1, steps - 1);
    for (let step = 0; step < steps; step++) {
      const replica = random.pick(replicas);
      const roll = random.next();
      if (roll < 0.7) {
        for (let k = random.int(1, 3); k > 0; k--) write(random, replica, counter);
      } else if (roll < 0.8) {
        replica.socket?.close(); // a cut: the link reconnects (maybe to another server)
      } else if (roll < 0.9) {
        await replica.link?.close();
        replica.link = undefined;
      } else {
        replica.link ??= connect(replica, servers);
      }
      if (step === faultAt) {
        if (faults.killServer) {
          const slot = random.int(0, SERVERS - 1);
          await servers.kill(slot);
          // Writes go on while it is down; then it comes back on the same database.
          for (let k = 0; k < 5; k++) write(random, random.pick(replicas), counter);
          await servers.start(slot);
        }
        await faults.restartPostgres();
      }
      if (random.bool(0.5)) await new Promise((resolve) => setTimeout(resolve, random.int(0, 5)));
    }
    for (const replica of replicas) replica.link ??= connect(replica, servers);
    const reference = await referenceMerge(replicas, path);
    await settle(replicas, reference, servers);
    assertConverged(replicas, reference);
  } finally {
    await closeReplicas(replicas);
  }
}

test(
  `sync on PostgreSQL: ${CLIENTS} clients over ${SERVERS} servers converge through server kills and a PostgreSQL restart (${SCHEDULES} schedules)`,
  { timeout: 900_000 },
  async () => {
    const cluster = await startPostgres();
    const servers = new Servers(cluster.url);
    const faults = { kills: 0, restarts: 0 };
    try {
      for (let slot = 0; slot < SERVERS; slot++) await servers.start(slot);
      for (let i = 0; i < SCHEDULES; i++) {
        const seed = SEED + i;
        if (killsServer(seed)) faults.kills++;
        if (restartsPostgres(seed)) faults.restarts++;
        try {
          await schedule(seed, servers, {
            killServer: killsServer(seed),
            restartPostgres: () => restartsPostgres(seed) ? cluster.restart() : undefined,
          });
        } catch (err) {
          throw new Error(`schedule failed; replay with CAIRN_FUZZ_SEED=${seed} CAIRN_FUZZ=1`, {
            cause: err,
          });
        }
      }
      // The faults the title promises happened (any run of 100 schedules or more has both).
      if (SCHEDULES >= 100) assert.ok(faults.kills >= 10 && faults.restarts >= 1);
    } finally {
      await servers.stopAll();
      await cluster.dispose();
    }
  },
);
