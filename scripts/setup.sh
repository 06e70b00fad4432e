#!/usr/bin/env bash
# One-time (and idempotent) set-up for a fresh Debian/Ubuntu machine with Node and npm:
# installs Chromium and PostgreSQL (the sync server's shared store: its tests start throwaway
# clusters) from apt when they are missing, and the pinned toolchain with `npm ci`.
# Fast when everything is already there.
set -euo pipefail
cd "$(dirname "$0")/.."

chromium_bin="${CHROMIUM_PATH:-/usr/bin/chromium}"
if [ ! -x "$chromium_bin" ]; then
  echo "setup: installing Chromium (apt-get)…"
  sudo_cmd=""
  if [ "$(id -u)" -ne 0 ]; then sudo_cmd="sudo"; fi
  $sudo_cmd apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq chromium >/dev/null
fi

# initdb and pg_ctl: on PATH, or in Debian's versioned directory (scripts/lib/postgres.ts looks
# in both).
if ! command -v initdb >/dev/null && ! ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; then
  echo "setup: installing PostgreSQL (apt-get)…"
  sudo_cmd=""
  if [ "$(id -u)" -ne 0 ]; then sudo_cmd="sudo"; fi
  $sudo_cmd apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq postgresql >/dev/null
fi

# npm ci only when node_modules is missing or older than the lock file (npm writes
# node_modules/.package-lock.json on every install).
if [ ! -x node_modules/.bin/deno ] || [ ! -f node_modules/.package-lock.json ] || \
   [ package-lock.json -nt node_modules/.package-lock.json ]; then
  echo "setup: npm ci…"
  npm ci --no-fund --no-audit --loglevel=error
fi
