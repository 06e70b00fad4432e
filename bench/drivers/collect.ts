/** Gathers one runtime's messages into its part of the envelope and drives the progress line. */
import type { RuntimeResult } from "../lib/envelope.ts";
import type { ProgressLine } from "../lib/progress.ts";
import type { Message, RuntimeName } from "../lib/types.ts";

export class Collector {
  readonly result: RuntimeResult = { rows: [], ms: 0 };
  done = false;
  readonly #runtime: RuntimeName;
  readonly #progress: ProgressLine;
  readonly #started = performance.now();

  constructor(runtime: RuntimeName, progress: ProgressLine) {
    this.#runtime = runtime;
    this.#progress = progress;
  }

  accept(message: Message): void {
    switch (message.type) {
      case "info":
        this.result.info = message.info;
        break;
      case "progress":
        this.#progress.update(this.#runtime, message);
        break;
      case "row":
        this.result.rows.push(message.row);
        this.#progress.finished(this.#runtime, message.row);
        break;
      case "done":
        this.done = true;
        break;
      case "fatal":
        this.result.problem = message.error;
        this.done = true;
        break;
    }
  }

  finish(problem?: string): RuntimeResult {
    this.#progress.clear();
    this.result.ms = performance.now() - this.#started;
    if (problem && !this.result.problem) this.result.problem = problem;
    if (!this.done && !this.result.problem) this.result.problem = "ended without finishing";
    return this.result;
  }
}
