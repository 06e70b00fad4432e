/**
 * Converts a Cairn log file between the binary (.log) and JSONL (.jsonl) formats, choosing each
 * format from the file's extension. Never overwrites: the output file must not exist yet.
 * Converting to the same format rewrites the log without its damaged records.
 *
 *   deno run -A scripts/convert-log.ts <in.log|in.jsonl> <out.log|out.jsonl>
 *
 * Exit status: 0 when converted (damaged records, if any, are listed), 1 on error, 2 on bad usage.
 */
import { isCairnError } from "../src/core/errors.ts";
import { cryptoSuite } from "../src/runtime/crypto_suite.ts";
import { convertLog, logFormatForFile } from "../src/storage/log_convert.ts";

const USAGE = "usage: deno run -A scripts/convert-log.ts <in.log|in.jsonl> <out.log|out.jsonl>";

async function main(args: string[]): Promise<number> {
  if (args.length !== 2) {
    console.error(USAGE);
    return 2;
  }
  const [input, output] = args;
  const from = logFormatForFile(input);
  const to = logFormatForFile(output);
  if (!from || !to) {
    console.error(`${!from ? input : output}: the extension must be .log or .jsonl\n${USAGE}`);
    return 2;
  }
  if (await exists(output)) {
    console.error(`${output} already exists; refusing to overwrite it`);
    return 1;
  }
  const bytes = await Deno.readFile(input);
  const converted = await convertLog(bytes, from, to, await cryptoSuite());
  // createNew: fails rather than overwrite a file that appeared since the check above.
  await Deno.writeFile(output, converted.bytes, { createNew: true });

  console.log(
    `${input} (${from.name}, ${size(bytes.length)}) -> ${output} (${to.name}, ${
      size(converted.bytes.length)
    }): ${converted.blocks} blocks`,
  );
  if (converted.damaged.length === 0) {
    console.log("no damage found");
  } else {
    const lost = converted.damaged.reduce((sum, d) => sum + d.length, 0);
    console.log(
      `NOT carried over: ${converted.damaged.length} damaged region(s), ${size(lost)} in all:`,
    );
    for (const { offset, length, reason } of converted.damaged) {
      console.log(`  bytes ${offset}..${offset + length} (${length} B): ${reason}`);
    }
  }
  return 0;
}

async function exists(path: string): Promise<boolean> {
  try {
    await Deno.lstat(path);
    return true;
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) return false;
    throw err;
  }
}

function size(bytes: number): string {
  return bytes < 1024 * 1024 ? `${bytes} B` : `${(bytes / (1024 * 1024)).toFixed(2)} MiB`;
}

if (import.meta.main) {
  try {
    Deno.exit(await main(Deno.args));
  } catch (err) {
    console.error(isCairnError(err) || err instanceof Deno.errors.NotFound ? err.message : err);
    Deno.exit(1);
  }
}
