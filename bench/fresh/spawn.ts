/**
 * Starts a fresh process of the runtime being measured for one request: Deno runs the probe's
 * TypeScript, Node its bundle (bench/drivers/build.ts). The runner starts every runtime in the
 * project's root, which the paths below are relative to.
 */
import { execFile } from "node:child_process";
import process from "node:process";
import { type FreshRequest, type FreshRunner, parseFreshReply } from "./protocol.ts";

export const NODE_PROBE_BUNDLE = "build/bench/fresh_probe.mjs";

export function freshRunner(runtime: "deno" | "node"): FreshRunner {
  // --expose-gc: the probe collects garbage before each memory figure.
  const prefix = runtime === "deno"
    ? ["run", "-A", "--v8-flags=--expose-gc", "bench/fresh/probe.ts"]
    : ["--expose-gc", "--disable-warning=ExperimentalWarning", NODE_PROBE_BUNDLE];
  return (request: FreshRequest) =>
    new Promise((resolve, reject) => {
      execFile(
        process.execPath,
        [...prefix, JSON.stringify(request)],
        { env: { ...process.env, NO_COLOR: "1" }, maxBuffer: 1 << 20 },
        (error, stdout, stderr) => {
          try {
            resolve(parseFreshReply(String(stdout), String(stderr)));
          } catch (err) {
            reject(error ?? err);
          }
        },
      );
    });
}
