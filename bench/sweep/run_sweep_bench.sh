#!/bin/sh
# Throughput of `pliant sweep` (docs/performance.md, "Parameter sweeps"): the 64 small cases of
# bench/sweep/sweep64.json with --jobs 1, --jobs 2 and `mpirun -n 2` (one case at a time per rank),
# and the same 64 scenes run alone, one `pliant run --threads 1 --no-frames` process each. The four
# are interleaved over ROUNDS rounds so that a noisy, shared machine slows them alike; compare
# ratios within a round. Every configuration must give the same results table. The fixed costs are
# timed apart: jobs1-rerun and mpi2-rerun run the finished sweep again (nothing to run: loading the
# sweep, the folder's checks and the 0-frame base run, reading 64 case folders back; and for MPI,
# mpirun starting two ranks and MPI_Init).
# Usage: bench/sweep/run_sweep_bench.sh PLIANT [ROUNDS] [CSV]   (CSV default bench/results/sweep.csv)
set -eu
pliant=$(realpath "$1")
rounds=${2:-3}
csv=${3:-bench/results/sweep.csv}
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cases=64
# seconds: wall clock; cpu_seconds: user + system time of the command and its children (GNU time),
# which other work on a shared machine does not inflate the way it does the wall clock.
echo "round,config,cases,seconds,cases_per_minute,seconds_per_case,cpu_seconds,cpu_seconds_per_case" >"$csv.tmp"
row() { # round config (GNU time's "%e %U %S" in $work/time)
  read -r wall user sys <"$work/time"
  awk -v r="$1" -v c="$2" -v s="$wall" -v u="$user" -v k="$sys" -v n="$cases" \
    'BEGIN { printf "%s,%s,%d,%.3f,%.1f,%.4f,%.3f,%.4f\n", r, c, n, s, 60 * n / s, s / n, u + k, (u + k) / n }' >>"$csv.tmp"
}
timed() { /usr/bin/time -f "%e %U %S" -o "$work/time" "$@"; }
# The resolved scenes for the runs alone, and the reference table, from a first sweep (which also
# warms the file cache).
"$pliant" sweep "$here/sweep64.json" --out "$work/scenes" --jobs 2 -q
for r in $(seq 1 "$rounds"); do
  for config in alone jobs1 jobs2 mpi2 jobs1-rerun mpi2-rerun; do
    out="$work/$config-$r"
    case $config in
      alone)
        timed sh -c 'for scene in "$1"/scenes/cases/*/scene.json; do
                       "$2" run "$scene" --out "$3/$(basename "$(dirname "$scene")")" --no-frames --threads 1 -q || exit 1
                     done' sh "$work" "$pliant" "$out" ;;
      jobs1) timed "$pliant" sweep "$here/sweep64.json" --out "$out" --jobs 1 -q ;;
      jobs2) timed "$pliant" sweep "$here/sweep64.json" --out "$out" --jobs 2 -q ;;
      mpi2) timed env OMPI_MCA_btl_vader_single_copy_mechanism=none mpirun -n 2 --allow-run-as-root --oversubscribe \
              "$pliant" sweep "$here/sweep64.json" --out "$out" -q ;;
      jobs1-rerun) out="$work/jobs1-$r"; timed "$pliant" sweep "$here/sweep64.json" --out "$out" --jobs 1 -q ;;
      mpi2-rerun) out="$work/mpi2-$r"; timed env OMPI_MCA_btl_vader_single_copy_mechanism=none mpirun -n 2 \
              --allow-run-as-root --oversubscribe "$pliant" sweep "$here/sweep64.json" --out "$out" -q ;;
    esac
    row "$r" "$config"
    if [ "$config" != alone ] && ! cmp -s "$out/results.csv" "$work/scenes/results.csv"; then
      echo "run_sweep_bench: $config gave another results table" >&2
      exit 1
    fi
  done
done
# The solver's own time per case (summary.json timings.simulate_s, mean over the cases run alone).
simulate=$(cat "$work"/alone-1/*/summary.json | awk -F: '/"simulate_s"/ { gsub(/[ ,]/, "", $2); s += $2; n++ } END { printf "%.4f", s / n }')
echo "# solver time per case (simulate_s, mean of round 1 alone): $simulate s" >>"$csv.tmp"
mv "$csv.tmp" "$csv"
cat "$csv"
