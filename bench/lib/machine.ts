/** Facts about the machine and the checkout, for the envelope (runner side, Deno). */
import { cpus, hostname, totalmem } from "node:os";
import type { Machine } from "./envelope.ts";

export async function describeMachine(): Promise<Machine> {
  const list = cpus();
  const cpu = list[0]?.model?.trim() ?? "unknown CPU";
  const os = `${Deno.build.os} ${Deno.osRelease()} (${Deno.build.arch})`;
  const memoryBytes = totalmem();
  const digest = await crypto.subtle.digest(
    "SHA-256",
    new TextEncoder().encode(`${cpu}|${list.length}|${memoryBytes}|${os}|${hostname()}`),
  );
  const fingerprint = Array.from(new Uint8Array(digest).slice(0, 4))
    .map((b) => b.toString(16).padStart(2, "0")).join("");
  return { cpu, cores: list.length, memoryBytes, os, fingerprint };
}

/** The short commit, with "-dirty" when the working tree has changes. */
export async function describeCommit(): Promise<string> {
  const git = async (...args: string[]) => {
    const out = await new Deno.Command("git", { args, stdout: "piped", stderr: "null" }).output();
    return out.success ? new TextDecoder().decode(out.stdout).trim() : undefined;
  };
  const head = await git("rev-parse", "--short=10", "HEAD");
  if (!head) return "nocommit";
  const status = await git("status", "--porcelain", "--untracked-files=no");
  return status ? `${head}-dirty` : head;
}
