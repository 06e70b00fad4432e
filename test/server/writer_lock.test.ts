import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { readdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import process from "node:process";
import { Cairn, isCairnError } from "cairndb";
import { openFsBackend } from "../../src/storage/backends/fs.ts";
import { Contender } from "../harness/lock_contender.ts";
import { seededRandom } from "../harness/random.ts";
import { withTempDirectory } from "../harness/temp_directory.ts";

const TRIALS = Number(process.env.CAIRN_LOCK_TRIALS ?? 1000);
const SEED = Number(process.env.CAIRN_LOCK_SEED ?? 20261125);
/** Processes opening the directory at once in each round (issue #15 had two). */
const CONTENDERS = 2;
/** In the stale trials, the share of rounds whose winner is killed rather than closed. */
const KILL_SHARE = 1 / 50;

/** The pid of a process that has exited and been reaped (one of our own). */
function deadPid(): number {
  return spawnSync(process.execPath, ["--version"]).pid!;
}

function isDead(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return false;
  } catch (err) {
    return (err as { code?: string }).code === "ESRCH";
  }
}

/**
 * What a dead owner leaves behind, as far as files go: an older Cairn's `lock` and the owner
 * file `writer.pid`, both naming a process that has exited. (A killed holder of the OS lock
 * leaves nothing else: the kernel dropped its lock.)
 */
async function plantDeadOwner(directory: string, pid: number): Promise<void> {
  await writeFile(join(directory, "lock"), String(pid));
  await writeFile(join(directory, "writer.pid"), String(pid));
}

function shuffle<T>(items: T[], random: () => number): T[] {
  const out = [...items];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [out[i], out[j]] = [out[j], out[i]];
  }
  return out;
}

/**
 * `TRIALS` rounds of `CONTENDERS` processes told to open one directory at the same moment (one
 * "open" line written to each stdin, in a random order, in the same tick). Every round must have
 * exactly one winner and only E_LOCKED for the others; the winner then closes — or, in some
 * stale rounds, is killed with SIGKILL and replaced, so the next round opens over what a killed
 * holder left. Rounds go on after a bad one so the failure says how many there were.
 */
async function trials(stale: boolean): Promise<void> {
  const seed = SEED + (stale ? 1 : 0);
  const random = seededRandom(seed);
  await withTempDirectory("lock-trials", async (directory) => {
    const contenders = await Promise.all(
      Array.from({ length: CONTENDERS }, () => Contender.start(directory)),
    );
    let dead = stale ? deadPid() : 0;
    const bad: string[] = [];
    const kinds = new Map<string, number>(); // "2+ winners", "no winner", "an error" → rounds
    let kills = 0;
    try {
      for (let round = 0; round < TRIALS; round++) {
        if (stale) {
          if (!isDead(dead)) dead = deadPid(); // its pid was given to a new process meanwhile
          await plantDeadOwner(directory, dead);
        }
        const answers = contenders.map((contender) => contender.next());
        for (const contender of shuffle(contenders, random)) contender.send("open");
        const replies = await Promise.all(answers);
        const winners = replies.filter((reply) => reply === "won").length;
        if (winners !== 1 || !replies.every((r) => r === "won" || r.startsWith("locked "))) {
          const kind = winners === 0 ? "no winner" : winners > 1 ? "2+ winners" : "an error";
          kinds.set(kind, (kinds.get(kind) ?? 0) + 1);
          bad.push(`round ${round}: ${replies.join(" | ")}`);
        }
        for (const [i, reply] of replies.entries()) {
          if (reply !== "won") continue;
          if (stale && random() < KILL_SHARE) {
            await contenders[i].kill();
            dead = contenders[i].pid;
            contenders[i] = await Contender.start(directory);
            kills++;
          } else {
            assert.equal(await contenders[i].ask("close"), "closed");
          }
        }
      }
    } finally {
      await Promise.all(contenders.map((contender) => contender.kill()));
    }
    const counts = [...kinds].map(([kind, rounds]) => `${kind}: ${rounds}`).join(", ");
    assert.deepEqual(
      bad,
      [],
      `${bad.length} of ${TRIALS} rounds${stale ? ` (${kills} holders killed)` : ""} did not ` +
        `have exactly one winner (${counts}); seed ${seed} (CAIRN_LOCK_SEED=${SEED} replays the ` +
        `order of the opens and the kills)\n${bad.slice(0, 5).join("\n")}`,
    );
  });
}

test(
  `${TRIALS} rounds of ${CONTENDERS} processes opening one database at once: exactly one wins each`,
  { timeout: 5 * 60_000 },
  () => trials(false),
);

test(
  `${TRIALS} rounds of ${CONTENDERS} processes opening at once over a dead owner's lock: exactly one wins each`,
  { timeout: 5 * 60_000 },
  () => trials(true),
);

/** A rejection predicate: E_LOCKED, with a message that says `owner`. */
function lockedBy(owner: string) {
  return (err: unknown) => {
    assert.ok(isCairnError(err, "E_LOCKED"), `expected E_LOCKED, got ${err}`);
    assert.ok(err.message.includes(owner), `"${err.message}" should name ${owner}`);
    return true;
  };
}

test("a holder killed with SIGKILL leaves the lock to the next opener; while alive, E_LOCKED names its pid", async () => {
  await withTempDirectory("lock", async (path) => {
    const holder = await Contender.start(path);
    try {
      assert.equal(await holder.ask("open"), "won");
      await assert.rejects(Cairn.open({ path }), lockedBy(`process ${holder.pid}`));
    } finally {
      await holder.kill();
    }
    const db = await Cairn.open({ path });
    await db.close();
  });
});

test("a second open in the same process gets E_LOCKED and leaves the first one's lock held; close() releases it", async () => {
  await withTempDirectory("lock", async (path) => {
    const other = await Contender.start(path);
    try {
      const db = await Cairn.open({ path });
      await assert.rejects(Cairn.open({ path }), lockedBy(`this process (${process.pid})`));
      // The refused open closed its own handle on the lock file: the lock must still be held.
      assert.match(await other.ask("open"), new RegExp(`^locked .*process ${process.pid}`));
      await db.close();
      assert.equal(await other.ask("open"), "won");
      assert.equal(await other.ask("close"), "closed");
      await (await Cairn.open({ path })).close();
    } finally {
      await other.kill();
    }
  });
});

test("an older Cairn's lock file: naming a running process it refuses the open, naming a dead one it is removed", async () => {
  await withTempDirectory("lock", async (path) => {
    await (await Cairn.open({ path })).close();
    const running = await Contender.start(path); // alive, and holding nothing
    try {
      await writeFile(join(path, "lock"), String(running.pid));
      await assert.rejects(Cairn.open({ path }), lockedBy(`process ${running.pid}`));
      assert.ok((await readdir(path)).includes("lock"), "a live owner's lock file stays");
    } finally {
      await running.kill();
    }
    await writeFile(join(path, "lock"), String(deadPid()));
    const db = await Cairn.open({ path });
    assert.ok(!(await readdir(path)).includes("lock"), "a dead owner's lock file is removed");
    await db.close();
  });
});

test("the file backend refuses to read, write or remove its lock file (that would drop the lock)", async () => {
  await withTempDirectory("lock", async (path) => {
    const backend = await openFsBackend(path);
    await backend.acquireLock();
    try {
      // By code: the backend's CairnError is the sources' class, not the built package's (Node).
      const refused = (err: unknown) => (err as { code?: string }).code === "E_BAD_ARGUMENT";
      await assert.rejects(backend.readFile("writer.lock"), refused);
      await assert.rejects(backend.openAppend("writer.lock"), refused);
      await assert.rejects(backend.writeFileAtomic("writer.lock", new Uint8Array(1)), refused);
      await assert.rejects(backend.removeFile("writer.lock"), refused);
    } finally {
      await backend.close();
    }
  });
});
