/**
 * The `cairndb` command: `inspect`, `verify`, `convert`, `export` and `import` for a database
 * directory, and `serve`, the sync server (docs/cli.md). Runs on Node (`npx cairndb`, the built
 * dist/cli.js) and on Deno (`deno task cairn`). Each command is a module of src/cli/; this file
 * parses the command line, runs one and turns its outcome into the documented exit code.
 */
import { isCairnError } from "./core/errors.ts";
import { convert, CONVERT_OPTIONS } from "./cli/convert.ts";
import { EXPORT_OPTIONS, exportItems } from "./cli/export.ts";
import { IMPORT_OPTIONS, importItems } from "./cli/import.ts";
import { inspect, INSPECT_OPTIONS } from "./cli/inspect.ts";
import { type CliIo, processIo } from "./cli/io.ts";
import { serve, SERVE_FLAGS, SERVE_OPTIONS } from "./cli/serve.ts";
import { type Arguments, EXIT, parseArguments, USAGE, UsageError } from "./cli/usage.ts";
import { verify, VERIFY_OPTIONS } from "./cli/verify.ts";

interface Command {
  readonly options: readonly string[];
  readonly flags: readonly string[];
  /** The exit code, or undefined for a command that keeps running (serve). */
  run(io: CliIo, args: Arguments): Promise<number | undefined>;
}

const COMMANDS: Record<string, Command> = {
  inspect: { options: INSPECT_OPTIONS, flags: INSPECT_OPTIONS, run: inspect },
  verify: { options: VERIFY_OPTIONS, flags: VERIFY_OPTIONS, run: verify },
  convert: { options: CONVERT_OPTIONS, flags: [], run: convert },
  export: { options: EXPORT_OPTIONS, flags: [], run: exportItems },
  import: { options: IMPORT_OPTIONS, flags: [], run: importItems },
  serve: { options: SERVE_OPTIONS, flags: SERVE_FLAGS, run: serve },
};

async function main(io: CliIo): Promise<number | undefined> {
  const [name, ...rest] = io.args;
  const command = Object.hasOwn(COMMANDS, name ?? "") ? COMMANDS[name] : undefined;
  try {
    if (!command) {
      throw new UsageError(
        name === undefined ? "cairndb: no command" : `cairndb: unknown command ${name}`,
      );
    }
    return await command.run(io, parseArguments(rest, command.options, command.flags));
  } catch (err) {
    if (err instanceof UsageError) {
      io.error(`${err.message}\n${USAGE}`);
      return EXIT.usage;
    }
    // An error Cairn did not raise on purpose (a bug, a file system's own error) fails too.
    io.error(`cairndb ${name}: ${isCairnError(err) ? err.message : String(err)}`);
    return EXIT.failed;
  }
}

const io = await processIo();
const code = await main(io);
if (code !== undefined) io.exit(code);
