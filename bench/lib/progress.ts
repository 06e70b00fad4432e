/**
 * The runner's live progress line: on a terminal one line rewritten in place (workload,
 * runtime, contender, sample i/n); in a log (CI) one plain line per workload instead.
 */
import type { Message } from "./types.ts";

type ProgressMessage = Extract<Message, { type: "progress" }>;

export class ProgressLine {
  readonly #tty = Deno.stderr.isTerminal();
  readonly #encoder = new TextEncoder();
  #shown = false;
  #lastWorkload = "";

  update(runtime: string, m: ProgressMessage): void {
    if (!this.#tty) {
      if (m.workload !== this.#lastWorkload) {
        this.#lastWorkload = m.workload;
        console.error(`  ${runtime} ${m.workload}…`);
      }
      return;
    }
    const text =
      `  ${runtime} ▸ ${m.workload} · ${m.variant} · ${m.contender} · ${m.phase} ${m.i}/${m.n}`;
    const width = Deno.consoleSize?.().columns ?? 120;
    this.#write(`\r\x1b[K${text.slice(0, width - 1)}`);
    this.#shown = true;
  }

  /** Clears the line so ordinary output starts on a clean row. */
  clear(): void {
    if (this.#tty && this.#shown) this.#write("\r\x1b[K");
    this.#shown = false;
  }

  #write(text: string): void {
    Deno.stderr.writeSync(this.#encoder.encode(text));
  }
}
