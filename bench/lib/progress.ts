/**
 * The runner's live progress line: on a terminal one line rewritten in place (cell k of N over
 * every runtime of the run, the time left, then workload, runtime, contender, sample i/n); in a
 * log (CI) one plain line per workload instead, with the same count and time left.
 */
import { cellKey, type TimeLeft, timeLeftText } from "./time_left.ts";
import type { Message, Row, RuntimeName } from "./types.ts";

type ProgressMessage = Extract<Message, { type: "progress" }>;

export class ProgressLine {
  readonly #tty = Deno.stderr.isTerminal();
  readonly #encoder = new TextEncoder();
  readonly #timeLeft: TimeLeft;
  /** Cells of the runtimes before each runtime, to count k over the whole run. */
  readonly #offsets: Partial<Record<RuntimeName, number>>;
  #shown = false;
  #lastWorkload = "";

  constructor(timeLeft: TimeLeft, offsets: Partial<Record<RuntimeName, number>>) {
    this.#timeLeft = timeLeft;
    this.#offsets = offsets;
  }

  update(runtime: RuntimeName, m: ProgressMessage): void {
    this.#timeLeft.running(cellKey(runtime, m));
    const count = `${(this.#offsets[runtime] ?? 0) + m.cell} of ${this.#timeLeft.total}`;
    const eta = timeLeftText(this.#timeLeft.estimate());
    if (!this.#tty) {
      if (m.workload !== this.#lastWorkload) {
        this.#lastWorkload = m.workload;
        console.error(`  ${runtime} ${m.workload}… (row ${count}, ${eta})`);
      }
      return;
    }
    const text = `  [${count} · ${eta}] ${runtime} ▸ ${m.workload} · ${m.variant} · ` +
      `${m.contender} · ${m.phase} ${m.i}/${m.n}`;
    const width = Deno.consoleSize?.().columns ?? 120;
    this.#write(`\r\x1b[K${text.slice(0, width - 1)}`);
    this.#shown = true;
  }

  /** A row arrived: its cell is done. */
  finished(runtime: RuntimeName, row: Row): void {
    this.#timeLeft.finished(cellKey(runtime, row), row.ms);
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
