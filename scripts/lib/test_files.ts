/**
 * Which test files run where. Files under test/ named *.test.ts run in every runtime, except:
 * test/server/ runs only on Deno and Node (needs files, processes), test/browser/ only in Chromium.
 */
import { relative } from "node:path";

export type TestRuntime = "deno" | "node" | "browser";

async function walk(dir: string, out: string[]): Promise<void> {
  for await (const entry of Deno.readDir(dir)) {
    const path = `${dir}/${entry.name}`;
    if (entry.isDirectory && entry.name !== "harness") await walk(path, out);
    else if (entry.isFile && entry.name.endsWith(".test.ts")) out.push(path);
  }
}

export async function testFiles(runtime: TestRuntime, root = "test"): Promise<string[]> {
  const all: string[] = [];
  await walk(root, all);
  return all
    .filter((file) => {
      const rel = relative(root, file);
      if (rel.startsWith("server/")) return runtime !== "browser";
      if (rel.startsWith("browser/")) return runtime === "browser";
      return true;
    })
    .sort();
}
