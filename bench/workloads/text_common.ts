/**
 * What the text rows (text_traces.ts, text_published.ts) share: who they run on, the targets of
 * issue #22, and one-off documents that several rows read (written once per contender and size,
 * not once per row).
 */
import { TEXT_BASELINES, TEXT_CONTENDERS, type TextCtx } from "../contenders/text.ts";
import { NotApplicable, type Target } from "../lib/types.ts";

/** The fields every text row has. */
export const TEXT_ROW = {
  family: "text",
  contenders: TEXT_CONTENDERS,
  baselines: TEXT_BASELINES,
} as const;

/** Issue #22's time targets for the sequential trace: signed ≤ 3× Yjs, trusted ≤ 1.5× Yjs. */
export const TIME_TARGETS: readonly Target[] = [
  { contender: "cairn", atMost: 3, versus: "yjs" },
  { contender: "cairn-trusted", atMost: 1.5, versus: "yjs" },
];

/** The same target for both Cairn contenders. */
export function cairnTargets(atMost: number, versus?: string): Target[] {
  return [
    { contender: "cairn", atMost, versus },
    { contender: "cairn-trusted", atMost, versus },
  ];
}

export function kB(bytes: number): number {
  return bytes / 1000;
}

/** Memory rows need the engine's documents on the heap; Automerge keeps them elsewhere. */
export function requireHeapVisible(ctx: TextCtx): void {
  if (!ctx.heapVisible) {
    throw new NotApplicable(
      "Automerge keeps its documents in WebAssembly memory, which the heap figures do not see",
    );
  }
}

const made = new Map<string, Promise<unknown>>();

/**
 * A document several rows read (a stored replay, the messages of many users), made once per
 * contender and size in this process by the first row that needs it, in its untimed setup.
 */
export function madeOnce<T>(ctx: TextCtx, what: string, make: () => Promise<T>): Promise<T> {
  const key = `${ctx.contender}|${what}`;
  let value = made.get(key) as Promise<T> | undefined;
  if (!value) {
    value = make();
    made.set(key, value);
    // A failed attempt is not kept: the next row tries again and reports its own error.
    value.catch(() => made.delete(key));
  }
  return value;
}
