#!/usr/bin/env bash
# The decisions digest of every preset and of the SLS samples, one "name digest" line each:
# the numbers an optimisation must leave unchanged (README, "Decisions digests").
#   scripts/decisions-digests.sh [path/to/fairloom] [path/to/shared/data/sls]
# Compare two binaries:  diff <(scripts/decisions-digests.sh old) <(scripts/decisions-digests.sh new)
set -euo pipefail
bin=${1:-target/release/fairloom}
sls=${2:-../shared/data/sls}

digest() {  # name, then the sim arguments
  local name=$1
  shift
  printf '%-28s %s\n' "$name" "$("$bin" sim "$@" --json | python3 -c '
import json, sys
r = json.load(sys.stdin)
runs = r.get("runs")
print(" ".join(x["decisions_digest"] for x in runs) if runs else r["decisions_digest"])')"
}

for preset in meituan-1k meituan-12k hyperscale-100k yunikorn-10k preempt-1k preempt-1k-am spark-locality; do
  digest "$preset" --preset "$preset"
done
for preset in meituan-1k preempt-1k; do
  digest "$preset (capacity)" --preset "$preset" --scheduler capacity
done
if [ -d "$sls" ]; then
  for sched in fair capacity; do
    conf=(--allocations "$sls/fair-scheduler-allocation.xml")
    [ "$sched" = capacity ] && conf=(--capacity "$sls/capacity-scheduler.xml")
    digest "inputsls ($sched)" --trace "$sls/inputsls.json" --nodes "$sls/nodes.json" "${conf[@]}"
    digest "sls_dag ($sched)" --trace "$sls/sls_dag.json" --nodes "$sls/nodes.json" "${conf[@]}"
    digest "syn ($sched)" --synth "$sls/syn.json" "${conf[@]}"
    digest "syn_generic ($sched)" --synth "$sls/syn_generic.json" "${conf[@]}"
  done
fi
