/**
 * The editing traces of bench/data/ (real typing histories from josephg/editing-traces, CC BY 4.0;
 * see bench/data/README.md): reading the gzipped JSON, prefixes for quick runs, positions in the
 * unit each engine counts in, and the replay on a plain string that a sequential trace's final
 * text is checked with. The text rows replay these; the same code runs on Deno, Node and in
 * Chromium (the bytes come from a file or from the page's server).
 */

/** `[position, characters deleted, text inserted]`, applied like `Array.prototype.splice`. */
export type Patch = readonly [pos: number, del: number, ins: string];

/** How an engine counts positions: JavaScript string indexes, or Unicode code points. */
export type Units = "utf16" | "codepoints";

/** One writer: every transaction applies to the text the one before it left. */
export interface SequentialTrace {
  kind: "sequential";
  name: string;
  startContent: string;
  /** The text after the last transaction here (for a prefix: its replay on a plain string). */
  endContent: string;
  /** Patches per transaction, positions in code points as the trace gives them. */
  txns: readonly (readonly Patch[])[];
}

export interface ConcurrentTxn {
  /** Earlier transactions whose merged result this one edits (`[]`: the empty document). */
  parents: readonly number[];
  agent: number;
  patches: readonly Patch[];
}

/** Several writers, each transaction naming the ones it saw: replicas must branch and merge. */
export interface ConcurrentTrace {
  kind: "concurrent";
  name: string;
  numAgents: number;
  /** The merged text after every transaction, known for the whole trace only. */
  endContent?: string;
  txns: readonly ConcurrentTxn[];
}

export type Trace = SequentialTrace | ConcurrentTrace;

/** A trace file of bench/data/ and its size, which variant labels state before it is read. */
export interface TraceFile {
  file: string;
  title: string;
  /** Transactions in the file; loading a file of another size fails, so no label can lie. */
  txns: number;
}

export const TRACES = {
  sequential: { file: "seph-blog1.json.gz", title: "seph-blog1", txns: 137_154 },
  concurrent: { file: "clownschool.json.gz", title: "clownschool", txns: 23_136 },
} as const satisfies Record<string, TraceFile>;

/** Unzips and parses a trace file's bytes; a file of another shape fails here, by name. */
export async function parseTrace(name: string, gzipped: Uint8Array): Promise<Trace> {
  const stream = new Blob([gzipped as Uint8Array<ArrayBuffer>]).stream()
    .pipeThrough(new DecompressionStream("gzip"));
  const json = JSON.parse(await new Response(stream).text());
  const fail = (why: string) => new Error(`${name} is not an editing trace: ${why}`);
  if (!Array.isArray(json?.txns) || typeof json.endContent !== "string") {
    throw fail("no txns or endContent");
  }
  const patchesOf = (txn: { patches?: unknown }, i: number): Patch[] => {
    if (!Array.isArray(txn?.patches)) throw fail(`transaction ${i} has no patches`);
    for (const p of txn.patches) {
      if (
        !Array.isArray(p) || !Number.isInteger(p[0]) || !Number.isInteger(p[1]) ||
        typeof p[2] !== "string"
      ) throw fail(`transaction ${i} has a patch that is not [pos, del, ins]`);
    }
    return txn.patches as Patch[];
  };
  if (json.kind === "concurrent") {
    const txns: ConcurrentTxn[] = json.txns.map((txn: Record<string, unknown>, i: number) => {
      const parents = txn.parents;
      if (!Array.isArray(parents) || parents.some((p) => !(Number.isInteger(p) && p < i))) {
        throw fail(`transaction ${i}'s parents are not earlier transactions`);
      }
      return { parents, agent: Number(txn.agent), patches: patchesOf(txn, i) };
    });
    return {
      kind: "concurrent",
      name,
      numAgents: Number(json.numAgents),
      endContent: json.endContent,
      txns,
    };
  }
  const txns = json.txns.map(patchesOf);
  return {
    kind: "sequential",
    name,
    startContent: String(json.startContent ?? ""),
    endContent: json.endContent,
    txns,
  };
}

const cache = new Map<string, Promise<Trace>>();

/** A trace file of bench/data/, read and parsed once per process. */
export function loadTrace(
  trace: TraceFile,
  read: (file: string) => Promise<Uint8Array>,
): Promise<Trace> {
  let loaded = cache.get(trace.file);
  if (!loaded) {
    loaded = read(trace.file).then(async (bytes) => {
      const parsed = await parseTrace(trace.file, bytes);
      if (parsed.txns.length !== trace.txns) {
        throw new Error(`${trace.file} has ${parsed.txns.length} transactions, not ${trace.txns}`);
      }
      return parsed;
    });
    cache.set(trace.file, loaded);
  }
  return loaded;
}

/** Characters outside the Basic Multilingual Plane take two UTF-16 units, one code point. */
const SURROGATE = /[\uD800-\uDFFF]/;

function hasAstral(start: string, txns: readonly (readonly Patch[])[]): boolean {
  return SURROGATE.test(start) || txns.some((t) => t.some((p) => SURROGATE.test(p[2])));
}

/** The UTF-16 index of code point `pos` in `text`. */
function utf16Index(text: string, pos: number): number {
  let index = 0;
  for (let cp = 0; cp < pos; cp++) index += text.codePointAt(index)! > 0xffff ? 2 : 1;
  return index;
}

/**
 * A sequential trace's transactions with positions in `units`. The traces count code points;
 * where no character needs two UTF-16 units (both traces here) the two are the same and the
 * trace's own arrays come back. Otherwise each position is converted against the text as it
 * stands at that point of a replay: correct, and slow on long texts.
 */
export function sequentialIn(trace: SequentialTrace, units: Units): readonly (readonly Patch[])[] {
  if (units === "codepoints" || !hasAstral(trace.startContent, trace.txns)) return trace.txns;
  let text = trace.startContent;
  return trace.txns.map((txn) =>
    txn.map(([pos, del, ins]): Patch => {
      const at = utf16Index(text, pos);
      const end = at + utf16Index(text.slice(at), del);
      text = text.slice(0, at) + ins + text.slice(end);
      return [at, end - at, ins];
    })
  );
}

/**
 * A concurrent trace's transactions with positions in `units`. Converting would need the text of
 * each branch, so a trace with characters beyond the Basic Multilingual Plane is refused for
 * UTF-16 engines rather than replayed wrongly; the trace here has none.
 */
export function concurrentIn(trace: ConcurrentTrace, units: Units): readonly ConcurrentTxn[] {
  if (units === "utf16" && hasAstral("", trace.txns.map((t) => t.patches))) {
    throw new Error(`${trace.name} has characters beyond the BMP: no UTF-16 positions for it`);
  }
  return trace.txns;
}

/** Applies transactions (UTF-16 positions) to a plain string: the reference for final texts. */
export function replayOnString(start: string, txns: readonly (readonly Patch[])[]): string {
  let text = start;
  for (const txn of txns) {
    for (const [pos, del, ins] of txn) text = text.slice(0, pos) + ins + text.slice(pos + del);
  }
  return text;
}

/** The first `count` transactions of a sequential trace, with the text they end with. */
export function sequentialPrefix(trace: SequentialTrace, count: number): SequentialTrace {
  if (count >= trace.txns.length) return trace;
  const txns = trace.txns.slice(0, count);
  const prefix = { ...trace, txns };
  return {
    ...prefix,
    endContent: replayOnString(trace.startContent, sequentialIn(prefix, "utf16")),
  };
}

/**
 * The first `count` transactions of a concurrent trace: a whole history, since parents come
 * before their children. Its merged text is not in the file (see `endContent`).
 */
export function concurrentPrefix(trace: ConcurrentTrace, count: number): ConcurrentTrace {
  if (count >= trace.txns.length) return trace;
  return { ...trace, txns: trace.txns.slice(0, count), endContent: undefined };
}

/** "seph-blog1, 137,154 transactions" or "seph-blog1, first 2,000 of 137,154 transactions". */
export function traceLabel(trace: TraceFile, count: number): string {
  const all = trace.txns.toLocaleString("en-US");
  return count >= trace.txns
    ? `${trace.title}, ${all} transactions`
    : `${trace.title}, first ${count.toLocaleString("en-US")} of ${all} transactions`;
}
