#!/usr/bin/env bash
# Builds the web UI into web/dist (npm ci from the lockfile, then vite), unless the build is
# newer than every source file.
set -euo pipefail
cd "$(dirname "$0")/../web"
if [ -f dist/index.html ] && [ -z "$(find src index.html package-lock.json vite.config.ts -newer dist/index.html -print -quit)" ]; then
  exit 0
fi
if [ ! -d node_modules ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  echo "==> installing the web UI's packages (npm ci)"
  # Some npm 11 set-ups write lockfiles without other platforms' optional packages (rollup's
  # native builds), which `npm ci` then rejects; `npm install --no-save` still installs the
  # locked versions (package.json pins them exactly too).
  npm ci --no-audit --no-fund --loglevel=error 2>/dev/null \
    || npm install --no-audit --no-fund --no-save --loglevel=error
fi
echo "==> building the web UI"
npm run --silent build
