#!/usr/bin/env bash
# The fuzz targets under libFuzzer (cargo-fuzz, nightly), FUZZ_SECONDS each (default 60).
# New inputs libFuzzer finds go to a scratch corpus; fuzz/corpus/TARGET is read only. Prints
# one line per target with the runs done; a crash stops with the input under fuzz/artifacts.
# `make test` runs the same targets, bounded, on stable (crates/bai-fuzz/tests/bounded.rs).
set -euo pipefail
cd "$(dirname "$0")/.."
secs="${FUZZ_SECONDS:-60}"
if ! rustup toolchain list | grep -q '^nightly'; then
  echo "make fuzz needs the nightly toolchain: rustup toolchain install nightly" >&2
  exit 2
fi
if ! cargo fuzz --version >/dev/null 2>&1; then
  echo "==> installing cargo-fuzz"
  cargo install --locked cargo-fuzz
fi
scratch="$(mktemp -d /tmp/bai-fuzz.XXXXXX)"
trap 'rm -rf "$scratch"' EXIT
targets=(signature folder_path graphql units model_definition)
for t in "${targets[@]}"; do
  mkdir -p "$scratch/$t"
  log="$scratch/$t.log"
  if ! cargo +nightly fuzz run --fuzz-dir fuzz "$t" "$scratch/$t" "fuzz/corpus/$t" -- \
      -max_total_time="$secs" -print_final_stats=1 >"$log" 2>&1; then
    tail -40 "$log"
    echo "fuzz: $t FAILED (the input is under fuzz/artifacts/$t)"
    exit 1
  fi
  runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo '?')
  echo "fuzz: $t: $runs runs in ${secs} s, 0 crashes"
done
