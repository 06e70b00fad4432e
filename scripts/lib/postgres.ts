/**
 * A throwaway PostgreSQL cluster for the tests and the benchmark (Deno and Node): `initdb` on a
 * temporary directory, `pg_ctl start` on a free loopback port with its unix socket in that
 * directory, stopped with `pg_ctl stop -m immediate` and removed by `dispose`. PostgreSQL refuses
 * to run as root, so as root the commands run as the `postgres` user (`runuser`), which owns the
 * directory. The binaries come from PATH or Debian's /usr/lib/postgresql/<version>/bin;
 * scripts/setup.sh installs them when neither has them.
 */
import { execFile } from "node:child_process";
import { existsSync, readdirSync } from "node:fs";
import { chown, mkdtemp, readFile, rm } from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import process from "node:process";

export interface PostgresOptions {
  /** fsync at commit (default false: tests want speed; the benchmark wants the real cost). */
  fsync?: boolean;
  /** Connections the cluster accepts (default 100). */
  maxConnections?: number;
}

export interface PostgresCluster {
  /** `postgres://postgres@127.0.0.1:<port>/postgres` (trust authentication on loopback). */
  readonly url: string;
  readonly port: number;
  /** Stops the server at once (as a crash would: no checkpoint); `start` brings it back. */
  stop(): Promise<void>;
  start(): Promise<void>;
  /** stop + start. */
  restart(): Promise<void>;
  /**
   * Stops every process of the server (SIGSTOP) as a frozen host or a partition would: nothing
   * answers, no connection is closed. The function returned lets them go on (SIGCONT).
   */
  freeze(): Promise<() => void>;
  /** Stops the server (if running) and removes its directory. */
  dispose(): Promise<void>;
  [Symbol.asyncDispose](): Promise<void>;
}

/** Starts a new cluster; throws an Error naming scripts/setup.sh when PostgreSQL is missing. */
export async function startPostgres(options: PostgresOptions = {}): Promise<PostgresCluster> {
  const bin = postgresBinaries();
  const dir = await mkdtemp(join(tmpdir(), "cairn-pg-"));
  const data = join(dir, "data");
  const asRoot = process.getuid?.() === 0;
  let running = false;
  const pgCtl = (args: string[]) => runPostgresTool(join(bin, "pg_ctl"), args, asRoot);
  try {
    if (asRoot) await chownToPostgres(dir);
    await runPostgresTool(
      join(bin, "initdb"),
      [
        "-D",
        data,
        "-U",
        "postgres",
        "--auth=trust",
        "-E",
        "UTF8",
        "--no-sync",
        "--no-instructions",
      ],
      asRoot,
    );
    const port = await freePort();
    const settings = [
      `-p ${port}`,
      `-k ${dir}`,
      "-c listen_addresses=127.0.0.1",
      `-c fsync=${options.fsync ? "on" : "off"}`,
      `-c max_connections=${options.maxConnections ?? 100}`,
    ].join(" ");
    const start = async () => {
      await pgCtl(["start", "-D", data, "-w", "-s", "-l", join(dir, "log"), "-o", settings]);
      running = true;
    };
    const stop = async () => {
      if (!running) return;
      await pgCtl(["stop", "-D", data, "-m", "immediate", "-w", "-s"]);
      running = false;
    };
    await start();
    const dispose = async () => {
      try {
        await stop();
      } finally {
        await rm(dir, { recursive: true, force: true });
      }
    };
    return {
      url: `postgres://postgres@127.0.0.1:${port}/postgres`,
      port,
      stop,
      start,
      restart: async () => {
        await stop();
        await start();
      },
      freeze: async () => {
        const postmaster = Number(
          (await readFile(join(data, "postmaster.pid"), "utf8")).split("\n")[0],
        );
        const pids = [postmaster, ...await childrenOf(postmaster)];
        for (const pid of pids) process.kill(pid, "SIGSTOP");
        return () => {
          for (const pid of pids) process.kill(pid, "SIGCONT");
        };
      },
      dispose,
      [Symbol.asyncDispose]: dispose,
    };
  } catch (err) {
    if (running) await pgCtl(["stop", "-D", data, "-m", "immediate", "-w", "-s"]).catch(() => {});
    await rm(dir, { recursive: true, force: true });
    throw err;
  }
}

/** The processes whose parent is `pid` (a server's backends and workers). */
function childrenOf(pid: number): Promise<number[]> {
  return new Promise((resolve, reject) => {
    execFile("ps", ["--ppid", String(pid), "-o", "pid="], (err, stdout) => {
      // ps exits 1 when it lists nothing.
      if (err && stdout.trim() !== "") reject(err);
      else resolve(stdout.split(/\s+/).filter((field) => field !== "").map(Number));
    });
  });
}

/** The directory holding initdb and pg_ctl. */
function postgresBinaries(): string {
  const candidates = (process.env.PATH ?? "").split(":").filter((dir) => dir !== "");
  const debian = "/usr/lib/postgresql";
  if (existsSync(debian)) {
    for (const version of readdirSync(debian).sort().reverse()) {
      candidates.push(join(debian, version, "bin"));
    }
  }
  const found = candidates.find((dir) =>
    existsSync(join(dir, "initdb")) && existsSync(join(dir, "pg_ctl"))
  );
  if (!found) {
    throw new Error(
      "PostgreSQL's initdb and pg_ctl were not found (PATH, /usr/lib/postgresql/*/bin): " +
        "run scripts/setup.sh, which installs the Debian postgresql package",
    );
  }
  return found;
}

function runPostgresTool(tool: string, args: string[], asRoot: boolean): Promise<void> {
  const [command, commandArgs] = asRoot
    ? ["runuser", ["-u", "postgres", "--", tool, ...args]]
    : [tool, args];
  return new Promise((resolve, reject) => {
    execFile(command, commandArgs, (err, stdout, stderr) => {
      if (err) reject(new Error(`${tool} ${args[0]} failed: ${stderr || stdout || err.message}`));
      else resolve();
    });
  });
}

async function chownToPostgres(dir: string): Promise<void> {
  const ids = await new Promise<string>((resolve, reject) =>
    execFile("id", ["-u", "postgres"], (err, uid) => {
      if (err) reject(new Error("there is no postgres user: run scripts/setup.sh"));
      else {
        execFile("id", ["-g", "postgres"], (err2, gid) => {
          if (err2) reject(err2);
          else resolve(`${uid.trim()}:${gid.trim()}`);
        });
      }
    })
  );
  const [uid, gid] = ids.split(":").map(Number);
  await chown(dir, uid, gid);
}

/** A port nothing listens on now (the OS picks it). */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.on("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      const port = typeof address === "object" && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}
