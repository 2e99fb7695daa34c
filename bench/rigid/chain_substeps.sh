#!/usr/bin/env bash
# Issue 17's chain at several substep counts against Bullet, the engines alternated ROUNDS times
# in one session (docs/performance.md, "Rigid bodies against Bullet (issue 17)").
# Usage: bench/rigid/chain_substeps.sh OUT.csv [BEFORE_BINARY]
#   BEFORE_BINARY: a pliant_rigid_bench built from an earlier commit, measured in the same rounds
#   (variant "before"); the current build is variant "after".
set -euo pipefail
out=$1
before=${2:-}
build=${BUILD:-build/release}
rounds=${ROUNDS:-2}
substeps=${SUBSTEPS:-"20 10 5 4 3 2"}
header="round,scene,engine,variant,substeps,bodies,frames,ms_per_frame,max_penetration_m,max_joint_error_m,drift_m"
echo "$header" > "$out"
row() {  # round variant substeps command...
  local round=$1 variant=$2 n=$3
  shift 3
  "$@" --scene chain | tail -n 1 |
    awk -F, -v r="$round" -v v="$variant" -v n="$n" 'BEGIN{OFS=","} {print r,$1,$2,v,n,$3,$4,$5,$6,$7,$8}' >> "$out"
}
for round in $(seq 1 "$rounds"); do
  row "$round" bullet 1 "$build/bench/pliant_bullet_rigid_bench"
  for n in $substeps; do
    if [ -n "$before" ]; then row "$round" before "$n" "$before" --substeps "$n"; fi
    row "$round" after "$n" "$build/bench/pliant_rigid_bench" --substeps "$n"
  done
done
cat "$out"
