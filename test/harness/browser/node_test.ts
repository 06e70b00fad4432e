/**
 * Stand-in for `node:test` inside the browser test bundle (esbuild aliases `node:test` here).
 * Supports the subset the suite uses: `test(name, fn)` and `test(name, options, fn)`.
 * Tests register on import; run.ts executes them in order and reports each result.
 */
export interface TestOptions {
  timeout?: number;
}

export interface RegisteredTest {
  name: string;
  file: string;
  options: TestOptions;
  fn: () => unknown;
}

export const registeredTests: RegisteredTest[] = [];
let currentFile = "";

/** Called by the generated bundle entry before each test file is evaluated. */
export function setCurrentFile(file: string): void {
  currentFile = file;
}

type TestFn = () => unknown;

export function test(name: string, optionsOrFn: TestOptions | TestFn, maybeFn?: TestFn): void {
  const fn = typeof optionsOrFn === "function" ? optionsOrFn : maybeFn;
  const options = typeof optionsOrFn === "function" ? {} : optionsOrFn;
  if (!fn) throw new TypeError(`test "${name}" has no function`);
  registeredTests.push({ name, file: currentFile, options, fn });
}

export default test;
