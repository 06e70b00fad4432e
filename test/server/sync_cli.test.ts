/**
 * The `cairndb serve` command (src/cli.ts on Deno, the built dist/cli.js on Node): prints its
 * URL, serves (on files, or on PostgreSQL with --store), and on SIGTERM sends goaway, closes its
 * clients and exits 0.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { isCairnError } from "cairndb";
import { createSyncServer } from "cairndb/server";
import { CLOSE } from "../../src/sync/protocol.ts";
import { startPostgres } from "../../scripts/lib/postgres.ts";
import { runtimeCommand } from "../harness/runtime_command.ts";
import { RawClient } from "../harness/sync_client.ts";
import { withTempDirectory } from "../harness/temp_directory.ts";

const CLI = "Deno" in globalThis ? "src/cli.ts" : "dist/cli.js";

/** Runs `cairndb serve` with `options`, syncs one client through it, and stops it (SIGTERM). */
async function serveAndStop(options: string[]): Promise<void> {
  const [command, args] = runtimeCommand(CLI, ["serve", ...options, "--port", "0", "--open"]);
  const child = spawn(command, args, { stdio: ["ignore", "pipe", "pipe"] });
  const exited = new Promise<number | null>((resolve) => child.on("exit", resolve));
  let errors = "";
  child.stderr.on("data", (chunk) => (errors += chunk));
  let out = "";
  const url = await new Promise<string>((resolve, reject) => {
    child.stdout.setEncoding("utf8");
    child.stdout.on("data", (chunk: string) => {
      out += chunk;
      const found = out.match(/ws:\/\/127\.0\.0\.1:\d+/)?.[0];
      if (found) resolve(found);
    });
    void exited.then((code) => reject(new Error(`exited ${code}: ${errors}`)));
  });
  const client = await RawClient.connect(url);
  await client.catchUp("/data/cli");
  child.kill("SIGTERM");
  assert.equal((await client.next("goaway")).type, "goaway");
  assert.equal((await client.closed).code, CLOSE.goingAway);
  const code = await exited;
  assert.match(out, /stopped\n/, "it stopped cleanly");
  // Deno's node:child_process reports a child it sent a signal to as killed by that signal,
  // whatever its exit status; Node reports the status.
  if (!("Deno" in globalThis)) assert.equal(code, 0, errors);
}

test("cairndb serve: prints its URL, serves, and drains then exits 0 on SIGTERM", async () => {
  await withTempDirectory("cli", (dir) => serveAndStop(["--dir", dir]));
});

test("cairndb serve --store postgres://…: serves on PostgreSQL the same way", async () => {
  const cluster = await startPostgres();
  try {
    await serveAndStop(["--store", cluster.url]);
  } finally {
    await cluster.dispose();
  }
});

test("cairndb: a wrong command line prints the usage and exits 2", async () => {
  const [command, args] = runtimeCommand(CLI, ["serve", "--port", "1"]);
  const child = spawn(command, args, { stdio: ["ignore", "pipe", "pipe"] });
  let errors = "";
  child.stderr.setEncoding("utf8");
  child.stderr.on("data", (chunk: string) => (errors += chunk));
  const code = await new Promise<number | null>((resolve) => child.on("exit", resolve));
  assert.equal(code, 2);
  assert.match(errors, /cairndb serve needs --dir/);
  assert.match(errors, /usage: cairndb <command>/);
});

test("cairndb serve: --dir and --store together, or a --store that is not postgres://, exit 2", async () => {
  for (const options of [["--dir", "x", "--store", "postgres://h/db"], ["--store", "mysql://h"]]) {
    const [command, args] = runtimeCommand(CLI, ["serve", ...options]);
    const child = spawn(command, args, { stdio: ["ignore", "pipe", "pipe"] });
    let errors = "";
    child.stderr.setEncoding("utf8");
    child.stderr.on("data", (chunk: string) => (errors += chunk));
    const code = await new Promise<number | null>((resolve) => child.on("exit", resolve));
    assert.equal(code, 2, options.join(" "));
    assert.match(errors, /--store/);
  }
});

test("cairndb serve on a port in use, or a host that does not resolve: E_IO naming it, exit 3; the directory's server can start after", async () => {
  await withTempDirectory("cli", async (dir) => {
    const holder = await createSyncServer({ dir: `${dir}/held`, port: 0 });
    try {
      for (
        const [options, where] of [
          [["--port", String(holder.port)], `127.0.0.1:${holder.port}`],
          [["--port", "0", "--host", "no-such-host.invalid"], "no-such-host.invalid:0"],
        ]
      ) {
        const [command, args] = runtimeCommand(CLI, ["serve", "--dir", dir, ...options]);
        const child = spawn(command, args, { stdio: ["ignore", "pipe", "pipe"] });
        let errors = "";
        child.stderr.setEncoding("utf8");
        child.stderr.on("data", (chunk: string) => (errors += chunk));
        const code = await new Promise<number | null>((resolve) => child.on("exit", resolve));
        assert.equal(code, 3, errors);
        assert.match(errors, new RegExp(`E_IO: the sync server cannot listen on ${where}: `));
      }
      // In this process: the failed server let go of its directory (its store is closed).
      await assert.rejects(
        createSyncServer({ dir, port: holder.port }),
        (err) => isCairnError(err, "E_IO"),
      );
      const next = await createSyncServer({ dir, port: 0 });
      await next.close();
    } finally {
      await holder.close();
    }
  });
});
