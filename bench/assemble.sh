#!/usr/bin/env bash
# Puts the sections written by each benchmark (bench/results/*.md) together in bench/RESULTS.md.
set -euo pipefail
cd "$(dirname "$0")"
{
  echo "# Benchmark results"
  echo
  echo "Every number is a ratio against a baseline measured in the same run on the same machine."
  echo "Each section is rewritten by its script; run \`make bench\` for all of them."
  for f in results/*.md; do echo; cat "$f"; done
} > RESULTS.md
echo "written bench/RESULTS.md"
