/**
 * What the bench asks of a fresh process (bench/fresh/probe.ts) and what it answers: a figure
 * taken in a process that has done nothing else, so no earlier row's heap, caches or warm JIT
 * count. Types and the reply parser only: this module also goes into the browser bundle, where
 * there is no fresh process and rows that need one say n/a.
 */

/** "memory": heap and RSS after opening, then after reading every value; "open": the first open. */
export type FreshTask = "memory" | "open";

export type FreshRequest =
  | { side: "cairn"; task: FreshTask; contender: string; location: string }
  | { side: "sqlite"; task: FreshTask; engine: string; dir: string; name: string };

/** Bytes above what the process held before opening (after a full GC each time). */
export interface MemoryPoint {
  heap: number;
  rss: number;
}

export interface MemoryReply {
  afterOpen: MemoryPoint;
  afterRead: MemoryPoint;
}

export interface OpenReply {
  ms: number;
}

export type FreshReply = MemoryReply | OpenReply;

/** Runs one request in a new process of the runtime being measured and returns its answer. */
export type FreshRunner = (request: FreshRequest) => Promise<FreshReply>;

/** Marks the line of the probe's stdout that carries its answer. */
export const REPLY_PREFIX = "@@fresh ";

/**
 * The answer in a probe's stdout: the last line carrying the prefix. A probe that printed none
 * (it crashed) fails with what it printed, so the row's error says why.
 */
export function parseFreshReply(stdout: string, stderr = ""): FreshReply {
  const line = stdout.split("\n").findLast((l) => l.startsWith(REPLY_PREFIX));
  if (line === undefined) {
    const said = `${stderr}\n${stdout}`.trim().split("\n").slice(-5).join(" | ");
    throw new Error(`the fresh process gave no answer${said ? `: ${said}` : ""}`);
  }
  return JSON.parse(line.slice(REPLY_PREFIX.length)) as FreshReply;
}
