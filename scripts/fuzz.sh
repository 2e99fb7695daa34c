#!/usr/bin/env bash
# Builds the `fuzz` preset (Clang 14: libFuzzer, ASan, UBSan) and runs each fuzz target in turn, one
# process on one core, for SECONDS (default 60) with its seed corpus and dictionary; prints each
# target's executions, coverage and findings, and fails when any target found a crash, a timeout,
# an out-of-memory or a leak. Install what is missing first (scripts/install-deps.sh --clang).
# Usage: scripts/fuzz.sh [SECONDS_PER_TARGET] [TARGET...]   (targets: scene obj tetgen gmsh checkpoint)
# The corpus each run adds to is build/fuzz/corpus/<target>/ (kept between runs); findings land in
# build/fuzz/artifacts/<target>/, the log in build/fuzz/logs/<target>.log. README "Fuzzing" says
# how to run for hours and how a finding becomes a regression input.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-60}"
[ $# -gt 0 ] && shift
targets=("$@")
[ ${#targets[@]} -eq 0 ] && targets=(scene obj tetgen gmsh checkpoint)
case "$seconds" in ''|*[!0-9]*) echo "fuzz: SECONDS_PER_TARGET must be a whole number, got '$seconds'" >&2; exit 2;; esac

scripts/install-deps.sh --clang
cmake --preset fuzz >/dev/null
cmake --build --preset fuzz

bin=build/fuzz/fuzz
# UBSan's reports with their stack (ASan prints one anyway); the build makes every report fatal.
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1}"
failed=()
report=()
for t in "${targets[@]}"; do
  if [ ! -x "$bin/pliant_fuzz_$t" ]; then
    echo "fuzz: no target '$t' (expected one of: scene obj tetgen gmsh checkpoint)" >&2
    exit 2
  fi
  corpus=build/fuzz/corpus/$t
  artifacts=build/fuzz/artifacts/$t
  log=build/fuzz/logs/$t.log
  mkdir -p "$corpus" "$artifacts" build/fuzz/logs
  before=$(find "$artifacts" -type f | wc -l)
  echo "fuzz: $t for ${seconds} s" >&2
  # Limits: 10 s per input (timeout), 2 GiB resident and 512 MiB in one allocation (out-of-memory):
  # the targets keep their own work far below them (fuzz/scene_fuzz.cpp), so a hit is a finding.
  set +e
  "$bin/pliant_fuzz_$t" "$corpus" "$bin/seeds/$t" -dict="$bin/dict/$t.dict" -max_total_time="$seconds" \
    -timeout=10 -rss_limit_mb=2048 -malloc_limit_mb=512 -print_final_stats=1 -artifact_prefix="$artifacts/" \
    >"$log" 2>&1
  rc=$?
  set -e
  # A run that stops while loading its seeds prints no status line: `|| true` keeps the script going.
  execs=$(grep -o 'stat::number_of_executed_units: [0-9]*' "$log" | awk '{print $2}' | tail -1 || true)
  last=$(grep -E '^#[0-9]+' "$log" | tail -1 || true)
  cov=$(grep -o 'cov: [0-9]*' <<<"$last" | awk '{print $2}' || true)
  ft=$(grep -o 'ft: [0-9]*' <<<"$last" | awk '{print $2}' || true)
  inputs=$(find "$corpus" -type f | wc -l)
  found=$(( $(find "$artifacts" -type f | wc -l) - before ))
  line=$(printf '%-10s %10s executions  cov %5s  ft %6s  corpus %5s  findings %s' "$t" "${execs:-?}" "${cov:-?}" "${ft:-?}" "$inputs" "$found")
  report+=("$line")
  if [ "$rc" -ne 0 ] || [ "$found" -ne 0 ]; then
    failed+=("$t")
    echo "fuzz: $t FAILED (exit $rc); the end of $log:" >&2
    grep -E 'ERROR|SUMMARY|pliant fuzz:|#[0-9]+ 0x|artifact|Test unit written' "$log" | head -40 >&2 || tail -40 "$log" >&2
  fi
done

echo "fuzz: ${seconds} s per target"
printf '%s\n' "${report[@]}"
if [ ${#failed[@]} -gt 0 ]; then
  echo "fuzz: findings in ${failed[*]}; inputs in build/fuzz/artifacts/<target>/ (README \"Fuzzing\": minimise, then keep as a regression input)" >&2
  exit 1
fi
echo "fuzz: no findings"
