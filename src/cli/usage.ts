/**
 * The command line: the usage text, the exit codes it documents, and the parsing of a
 * command's arguments (one directory, `--name value` options and `--flag` switches).
 */

/** Exit codes, the same for every command (docs/cli.md). */
export const EXIT = {
  /** Done; `verify` found nothing wrong. */
  ok: 0,
  /** `verify` found problems (each is printed). */
  problems: 1,
  /** The command line is wrong: the usage is printed. */
  usage: 2,
  /**
   * The command could not do its work: not a database, the database is open in another process
   * (E_LOCKED), an import file that is not a valid export (nothing is imported), an I/O error.
   */
  failed: 3,
} as const;

export const USAGE = `usage: cairndb <command> …

  cairndb inspect <dir>                        repositories, items, sessions, blocks, damage,
                                               checkpoints (reads only, changes nothing)
  cairndb verify <dir>                         every record's checksum, block signature and
                                               session chain
  cairndb convert <dir> --to jsonl|binary      every log and cairn.json to the other format
  cairndb export <dir> [--repository /path]    items as plain JSON, to standard output
  cairndb import <dir>                         items from an export, from standard input
  cairndb serve --dir <directory> [--port 8787] [--host 127.0.0.1] [--open]
                                               a sync server (see docs/sync.md)
  cairndb serve --store postgres://… [--port …] one of N sync servers sharing PostgreSQL
                                               (see docs/deploy.md)

exit codes: 0 done (verify: no problem found), 1 verify found problems, 2 usage error,
            3 the command failed: not a database, E_LOCKED (open elsewhere), an import file
            that is not a valid export (nothing is imported), an I/O error`;

/** A wrong command line: the usage is printed and the exit code is 2. */
export class UsageError extends Error {
  override name = "UsageError";
}

export interface Arguments {
  /** Arguments that are not options, in order. */
  readonly positional: readonly string[];
  /** `--name value` options and `--flag` switches (value "true"). */
  readonly options: ReadonlyMap<string, string>;
}

/**
 * Parses `args`; `flags` name the switches that take no value, `known` every option allowed.
 * Throws UsageError for an unknown option or one without its value.
 */
export function parseArguments(
  args: readonly string[],
  known: readonly string[],
  flags: readonly string[] = [],
): Arguments {
  const positional: string[] = [];
  const options = new Map<string, string>();
  for (let i = 0; i < args.length; i++) {
    const arg = args[i];
    if (!arg.startsWith("--")) {
      positional.push(arg);
      continue;
    }
    const name = arg.slice(2);
    if (!known.includes(name)) throw new UsageError(`cairndb: unknown option ${arg}`);
    if (flags.includes(name)) options.set(name, "true");
    else if (i + 1 < args.length) options.set(name, args[++i]);
    else throw new UsageError(`cairndb: ${arg} needs a value`);
  }
  return { positional, options };
}

/** The one directory argument a data command takes. */
export function directoryArgument(args: Arguments, command: string): string {
  if (args.positional.length !== 1) {
    throw new UsageError(`cairndb ${command} takes one database directory`);
  }
  return args.positional[0];
}
