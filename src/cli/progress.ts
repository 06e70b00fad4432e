/**
 * A progress line on standard error for long work ("convert: 3/12 repositories"), redrawn in
 * place, only when standard error is a terminal: piped or redirected, the commands print nothing
 * but their results, so scripts and tests read clean output.
 */
import type { CliIo } from "./io.ts";

/** Redraws at most this often: drawing every step of a fast loop would slow it down. */
const REDRAW_MS = 100;

export interface Progress {
  /** `done` of `total` steps are done; `what` names the current one. */
  step(done: number, total: number, what: string): void;
  /** Clears the line. */
  end(): void;
}

export function progress(io: CliIo, label: string): Progress {
  if (!io.errorIsTerminal) return { step() {}, end() {} };
  let drawn = 0;
  let shown = false;
  return {
    step(done, total, what) {
      const now = Date.now();
      if (now - drawn < REDRAW_MS && done < total) return;
      drawn = now;
      shown = true;
      const width = 20;
      const filled = total === 0 ? width : Math.round((done / total) * width);
      const bar = "#".repeat(filled) + "-".repeat(width - filled);
      io.errorRaw(`\r\x1b[2K${label} [${bar}] ${done}/${total} ${what}`);
    },
    end() {
      if (shown) io.errorRaw("\r\x1b[2K");
    },
  };
}
