/**
 * Where a V8 CPU profile's time went (the `Profiler.stop` result of the inspector protocol, the
 * same shape as a .cpuprofile file): by area (each of Cairn's modules, the runtime's own code,
 * packages, GC, idle) and by function, self time and time on the stack.
 */

export interface CpuProfile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples: number[];
  /** µs since the sample before (the first: since startTime). */
  timeDeltas: number[];
}

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}

export interface TimeShare {
  name: string;
  ms: number;
  /** Of the profile's whole time. */
  share: number;
}

export interface ProfileSummary {
  totalMs: number;
  /** Self time by area: a module of src/ by its path, else a coarser place (see areaOf). */
  areas: TimeShare[];
  /** Self time by function. */
  self: TimeShare[];
  /** Time with the function anywhere on the stack (recursion counted once), Cairn's functions only. */
  onStack: TimeShare[];
}

/** The synthetic frames V8 puts at the bottom of a sample that ran no JS. */
const SYNTHETIC: Record<string, string> = {
  "(garbage collector)": "GC",
  "(idle)": "idle (waiting for I/O or timers)",
  "(program)": "V8 and the runtime, outside JS",
};

type CallFrame = ProfileNode["callFrame"];

/**
 * An esbuild bundle the profiled code ran from (not minified: each module's code follows a
 * `// path` comment line), so that its frames are told apart by the module they came from.
 */
export class BundleModules {
  readonly url: string;
  /** Where each module starts (0-based line) and its path, in order. */
  readonly #starts: { line: number; path: string }[] = [];

  constructor(url: string, code: string) {
    this.url = url;
    code.split("\n").forEach((text, line) => {
      const comment = /^\/\/ ((?:src|bench|node_modules)\/\S+\.[cm]?[jt]sx?)$/.exec(text);
      if (comment) this.#starts.push({ line, path: comment[1] });
    });
  }

  /** The module a frame's line is in: the last one starting at or before it. */
  pathAt(line: number): string | undefined {
    let found: string | undefined;
    for (const start of this.#starts) {
      if (start.line > line) break;
      found = start.path;
    }
    return found;
  }
}

/** Where a frame's code came from: a path from the repository's root where one is known. */
function pathOf(frame: CallFrame, bundle: BundleModules | undefined): string {
  if (bundle && frame.url === bundle.url) return bundle.pathAt(frame.lineNumber) ?? frame.url;
  for (const root of ["/src/", "/bench/", "/node_modules/"]) {
    const at = frame.url.lastIndexOf(root);
    if (at >= 0) return frame.url.slice(at + 1);
  }
  return frame.url;
}

/** The project's own code: a module under src/ by its path, else undefined. */
function sourcePath(frame: CallFrame, bundle: BundleModules | undefined): string | undefined {
  const path = pathOf(frame, bundle);
  return path.startsWith("src/") ? path : undefined;
}

function areaOf(frame: CallFrame, bundle: BundleModules | undefined): string {
  const synthetic = SYNTHETIC[frame.functionName];
  if (synthetic && frame.url === "") return synthetic;
  const path = pathOf(frame, bundle);
  if (path.startsWith("src/")) return path;
  const pkg = /^node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(path);
  if (pkg) return `package ${pkg[1]}`;
  if (path.startsWith("bench/")) return "bench harness";
  if (/^(node|ext):/.test(path)) return `runtime ${path.split("/")[0]}`;
  return path === "" ? "V8 builtins" : "other";
}

/**
 * A function by its name and module. Not its line: the profiled code is what the runtime ran (Deno's
 * JavaScript made from the TypeScript, or a bundle), whose lines are not the source's.
 */
function functionOf(frame: CallFrame, bundle: BundleModules | undefined): string {
  const name = frame.functionName || "(anonymous)";
  const source = sourcePath(frame, bundle);
  return source ? `${name} ${source}` : `${name} [${areaOf(frame, bundle)}]`;
}

/** Each sample's weight: the time until the next sample (the last: until the profile's end). */
function sampleWeights(profile: CpuProfile): number[] {
  const times: number[] = [];
  let t = profile.startTime;
  for (const delta of profile.timeDeltas) times.push(t += delta);
  return times.map((time, i) => Math.max(0, (times[i + 1] ?? profile.endTime) - time));
}

function ranked(totals: Map<string, number>, totalUs: number, top: number): TimeShare[] {
  return [...totals]
    .sort((a, b) => b[1] - a[1])
    .slice(0, top)
    .map(([name, us]) => ({ name, ms: us / 1000, share: us / totalUs }));
}

function add(totals: Map<string, number>, key: string, us: number): void {
  totals.set(key, (totals.get(key) ?? 0) + us);
}

export function summarizeProfile(
  profile: CpuProfile,
  top = 20,
  bundle?: BundleModules,
): ProfileSummary {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const parent = new Map<number, number>();
  for (const node of profile.nodes) {
    for (const child of node.children ?? []) parent.set(child, node.id);
  }
  const weights = sampleWeights(profile);
  const totalUs = weights.reduce((sum, w) => sum + w, 0) || 1;
  const areas = new Map<string, number>();
  const self = new Map<string, number>();
  const onStack = new Map<string, number>();
  profile.samples.forEach((id, i) => {
    const us = weights[i];
    const leaf = byId.get(id)!.callFrame;
    add(areas, areaOf(leaf, bundle), us);
    add(self, functionOf(leaf, bundle), us);
    const seen = new Set<string>();
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
      const frame = byId.get(at)!.callFrame;
      if (!sourcePath(frame, bundle)) continue;
      const key = functionOf(frame, bundle);
      if (!seen.has(key)) {
        seen.add(key);
        add(onStack, key, us);
      }
    }
  });
  return {
    totalMs: totalUs / 1000,
    areas: ranked(areas, totalUs, top),
    self: ranked(self, totalUs, top),
    onStack: ranked(onStack, totalUs, top),
  };
}

/** The summary as text: three ranked lists. */
export function formatSummary(summary: ProfileSummary): string {
  const list = (title: string, rows: TimeShare[]) =>
    [
      `  ${title}`,
      ...rows.map((row) =>
        `    ${(row.share * 100).toFixed(1).padStart(5)} %  ${
          row.ms.toFixed(1).padStart(9)
        } ms  ${row.name}`
      ),
    ].join("\n");
  return [
    `  profiled: ${summary.totalMs.toFixed(1)} ms`,
    list("self time by area", summary.areas),
    list("self time by function", summary.self),
    list("on the stack (Cairn's functions)", summary.onStack),
  ].join("\n");
}
