/**
 * Loaded before the Deno test run's modules (scripts/test.ts, `--preload`). Deno's node:test lets
 * an error thrown outside a test's own promise (in a microtask, a timer, an event handler) pass
 * without failing anything, where Node's runner fails the file: a Cairn report of an uncaught
 * error went unseen on Deno. Each such error is printed where it happens, and the run fails at
 * its end. Errors a test takes on purpose (captureUncaught, peers.ts) are let through.
 */
const captured = (globalThis as unknown as Record<symbol, WeakSet<object>>)[
  Symbol.for("cairn.test.captured")
] ??= new WeakSet();
const uncaught: string[] = [];

addEventListener("error", (event) => {
  const error = (event as ErrorEvent).error;
  // captureUncaught's listener, registered after this one, marks what it takes.
  setTimeout(() => {
    if (typeof error === "object" && error !== null && captured.has(error)) return;
    const shown = String(error?.stack ?? (event as ErrorEvent).message);
    uncaught.push(shown);
    console.error(`uncaught error (outside any test's promise):\n${shown}`);
  }, 0);
});

addEventListener("unload", () => {
  if (uncaught.length === 0) return;
  console.error(`${uncaught.length} uncaught error(s) in this run: see above`);
  Deno.exit(1);
});
