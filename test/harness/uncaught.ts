/**
 * Collects what the runtime reports as uncaught while `run` (and the ticks after it) runs,
 * instead of letting it fail the test run: Node's "uncaughtException", the "error" event on Deno
 * and in the browser.
 */
const tick = () => new Promise((resolve) => setTimeout(resolve, 0));

export async function captureUncaught(run: () => unknown): Promise<unknown[]> {
  const errors: unknown[] = [];
  const g = globalThis as unknown as {
    Deno?: unknown;
    process?: {
      listeners(e: string): ((err: unknown) => void)[];
      removeAllListeners(e: string): void;
      on(e: string, l: (err: unknown) => void): void;
    };
    addEventListener?: (t: string, l: (e: ErrorEvent) => void) => void;
    removeEventListener?: (t: string, l: (e: ErrorEvent) => void) => void;
  };
  let restore: () => void;
  if (g.Deno === undefined && typeof g.process?.listeners === "function") {
    const process = g.process;
    const saved = process.listeners("uncaughtException");
    process.removeAllListeners("uncaughtException");
    process.on("uncaughtException", (err) => errors.push(err));
    restore = () => {
      process.removeAllListeners("uncaughtException");
      for (const l of saved) process.on("uncaughtException", l);
    };
  } else {
    const listener = (event: ErrorEvent) => {
      errors.push(event.error);
      event.preventDefault();
    };
    g.addEventListener!("error", listener);
    restore = () => g.removeEventListener!("error", listener);
  }
  try {
    await run();
    await tick();
    await tick();
  } finally {
    restore();
  }
  return errors;
}
