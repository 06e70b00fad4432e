/** The options of `sync()`, checked as every public entry point checks its arguments. */
import { badArgument, checkOptions, typeOf } from "../db/arguments.ts";
import { checkRepositoryPath } from "../core/repository_path.ts";
import { type BackoffOptions, DEFAULT_BACKOFF } from "./backoff.ts";
import { DEFAULT_MAX_FRAME } from "./protocol.ts";
import { MAX_URL } from "../tabs/tab_messages.ts";

export interface SyncOptions {
  /** An app token the server's `authorize` hook sees (e.g. a user's login). */
  token?: string;
  /**
   * The repositories to sync (while they are open). Default: every open repository, and every
   * one opened later.
   */
  repositories?: readonly string[];
  /** The largest frame this client sends or accepts (1 MiB by default; the server's may be lower). */
  maxFrame?: number;
  /** Reconnection delays: full jitter under a cap doubling from `initialMs` to `maxMs`. */
  backoff?: BackoffOptions;
}

export interface CheckedSyncOptions {
  readonly token: string | null;
  readonly repositories: ReadonlySet<string> | undefined;
  readonly maxFrame: number;
  readonly backoff: BackoffOptions;
}

/** A frame must hold at least a handshake and a small block. */
export const MIN_MAX_FRAME = 4096;

export function checkSyncOptions(url: unknown, given: unknown): CheckedSyncOptions {
  if (typeof url !== "string" || !/^wss?:\/\//.test(url) || url.length > MAX_URL) {
    throw badArgument(
      `sync: the server's URL is a ws:// or wss:// string of at most ${MAX_URL} characters, ` +
        `got ${typeof url === "string" ? `${url.length} characters` : typeOf(url)}`,
    );
  }
  // Said now, once: the socket's constructor would refuse it on every reconnect.
  if (!isSocketUrl(url)) {
    throw badArgument(`sync: the server's URL ${JSON.stringify(url)} does not parse, or has a #`);
  }
  const options = checkOptions<SyncOptions>(given, "sync options", [
    "token",
    "repositories",
    "maxFrame",
    "backoff",
  ]);
  if (options.token !== undefined && typeof options.token !== "string") {
    throw badArgument(`sync: token is a string, got ${typeOf(options.token)}`);
  }
  if (options.repositories !== undefined && !Array.isArray(options.repositories)) {
    throw badArgument(
      `sync: repositories is an array of paths, got ${typeOf(options.repositories)}`,
    );
  }
  const maxFrame = options.maxFrame ?? DEFAULT_MAX_FRAME;
  if (!Number.isSafeInteger(maxFrame) || maxFrame < MIN_MAX_FRAME) {
    throw badArgument(`sync: maxFrame is an integer of at least ${MIN_MAX_FRAME} bytes`);
  }
  return {
    token: options.token ?? null,
    repositories: options.repositories && new Set(options.repositories.map(checkRepositoryPath)),
    maxFrame,
    backoff: checkBackoff(options.backoff),
  };
}

/** Whether `url` parses, without a fragment (which the WebSocket constructor refuses too). */
function isSocketUrl(url: string): boolean {
  if (url.includes("#")) return false;
  try {
    new URL(url);
    return true;
  } catch {
    return false;
  }
}

function checkBackoff(given: unknown): BackoffOptions {
  if (given === undefined) return DEFAULT_BACKOFF;
  const backoff = checkOptions<BackoffOptions>(given, "sync backoff", ["initialMs", "maxMs"]);
  const { initialMs = DEFAULT_BACKOFF.initialMs, maxMs = DEFAULT_BACKOFF.maxMs } = backoff;
  if (
    typeof initialMs !== "number" || typeof maxMs !== "number" || !(initialMs > 0) ||
    !(maxMs >= initialMs) || !Number.isFinite(maxMs)
  ) {
    throw badArgument("sync: backoff is { initialMs > 0, maxMs >= initialMs } in milliseconds");
  }
  return { initialMs, maxMs };
}
