#!/usr/bin/env bash
# The sweep's Slurm job array on real Slurm 22.05 (docs/sweeps.md, "Slurm job arrays"): emits
# sweep.sbatch and merge.sbatch for tests/oracle/array/spec.yaml (3 shards), submits them as the docs
# say (the merge afterok the array), waits, and checks that every array task and the merge ended
# COMPLETED 0:0 in sacct and that the merged database holds exactly what one local process computes.
#
#   array.sh BUILD_DIR OUTDIR       (root; oracle.sh's daemons are started here if they are not up)
#
# Exit 0 on agreement, 1 otherwise (with the reason). ci.sh runs it after the live scenarios.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
BUILD="$(cd "$1" && pwd)"
OUT=$2
export ORACLE_ROOT="${ORACLE_ROOT:-/var/lib/slurmtwin-oracle}"
export SLURM_CONF="$ORACLE_ROOT/etc/slurm.conf"
B="$BUILD/experiments/slurmtwin"
fail() {
  echo "array.sh: FAILED: $*" >&2
  exit 1
}
log() { echo "[oracle-array $(date +%H:%M:%S)] $*" >&2; }

# A fresh controller and accounting database with the array's slurm.conf.
bash "$HERE/oracle.sh" reset "$HERE/array"
rm -rf "$OUT"
mkdir -p "$OUT"
OUT="$(cd "$OUT" && pwd)"
cp "$HERE/array/spec.yaml" "$OUT/spec.yaml"
"$B" sweep run "$OUT/spec.yaml" --emit-sbatch "$OUT/jobs" --shards 3 --cpus-per-task 1 --time 10 --partition batch
start_s=$(date +%s)
jid=$(sbatch --parsable "$OUT/jobs/sweep.sbatch")
mid=$(sbatch --parsable --dependency=afterok:"$jid" "$OUT/jobs/merge.sbatch")
log "submitted array $jid and merge $mid"
while [[ -n "$(squeue -h -o %i 2> /dev/null)" ]]; do
  if (($(date +%s) - start_s > 300)); then
    squeue > "$OUT/squeue.txt" 2>&1 || true
    squeue -h -o %i | xargs -r scancel || true
    fail "jobs still queued after 300 s (see $OUT/squeue.txt)"
  fi
  sleep 1
done
log "array and merge left the queue after $(($(date +%s) - start_s)) s"
# sacct may lag the controller by a moment: the four records must all be final.
for _ in $(seq 1 30); do
  sacct -n -X -P -j "$jid,$mid" -o JobID,JobName,State,ExitCode > "$OUT/sacct.txt"
  [[ $(grep -c . "$OUT/sacct.txt") == 4 ]] && ! grep -qE 'PENDING|RUNNING|COMPLETING' "$OUT/sacct.txt" && break
  sleep 1
done
cat "$OUT/sacct.txt"
for want in "${jid}_0|slurmtwin-sweep|" "${jid}_1|slurmtwin-sweep|" "${jid}_2|slurmtwin-sweep|" \
  "${mid}|slurmtwin-sweep-merge|"; do
  grep -qF "${want}COMPLETED|0:0" "$OUT/sacct.txt" || fail "no '${want}COMPLETED|0:0' in sacct (see $OUT/sacct.txt and $OUT/jobs/*.log)"
done
grep -q "6 points added" "$OUT/jobs/merge.log" || fail "merge.log does not report 6 points added"
# The same sweep in one local process: the merged table must equal it point for point.
"$B" sweep run "$OUT/spec.yaml" --db "$OUT/local.db" -j 2 > /dev/null
# Every column but run_seconds (a wall time), found by its header.
without_run_seconds() {
  awk -F, -v OFS=, 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == "run_seconds") drop = i }
    { out = ""; for (i = 1; i <= NF; i++) if (i != drop) out = out (out == "" ? "" : OFS) $i; print out }'
}
"$B" sweep show --db "$OUT/jobs/sweep.db" --csv | without_run_seconds > "$OUT/array.csv"
"$B" sweep show --db "$OUT/local.db" --csv | without_run_seconds > "$OUT/local.csv"
[[ $(ls "$OUT"/jobs/shard-*.db | wc -l) == 3 ]] || fail "not one database per array task: $(ls "$OUT/jobs")"
[[ $(grep -c . "$OUT/local.csv") == 7 ]] || fail "the local sweep does not hold 6 points (see $OUT/local.csv)"
cmp -s "$OUT/array.csv" "$OUT/local.csv" || fail "the array's merged points differ from a local run: diff $OUT/array.csv $OUT/local.csv"
echo "oracle-array: the 3-task array and its afterok merge ran on real Slurm in $(($(date +%s) - start_s)) s; 6 points equal a local run"
