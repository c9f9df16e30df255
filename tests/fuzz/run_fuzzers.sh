#!/usr/bin/env bash
# Runs every libFuzzer target for FUZZ_SECONDS each on a copy of its committed seed corpus
# (tests/fuzz/corpus/<target>/), then prints executions and time per target. Any crash, sanitizer
# report, leak, timeout (> 10 s on one input) or out-of-memory (> 2 GiB) fails the run; the input is
# saved as BUILD/fuzz-artifacts/<target>-crash-* (add it to the doctest suite as a regression test).
# Usage: run_fuzzers.sh BUILD_DIR SECONDS [TARGET...]
set -uo pipefail
build=$1
seconds=$2
shift 2
here=$(cd "$(dirname "$0")" && pwd)
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  targets=(sacct_parsable sacct_json swf events graham_csv eagle_csv native_trace
           slurm_conf gres_conf topology_conf sacctmgr_script assoc_dump site_events site_yaml sweep_spec
           surrogate_dataset surrogate_checkpoint scheduler)
fi
mkdir -p "$build/fuzz-corpus" "$build/fuzz-artifacts" "$build/fuzz-logs"
status=0
summary=""
total_execs=0
total_secs=0
for t in "${targets[@]}"; do
  bin="$build/tests/fuzz/fuzz_$t"
  if [ ! -x "$bin" ]; then echo "fuzz: $bin not built" >&2; exit 2; fi
  work="$build/fuzz-corpus/$t"  # new inputs land here, never in the committed corpus
  mkdir -p "$work"
  log="$build/fuzz-logs/$t.log"
  start=$(date +%s)
  # -timeout: one input taking > 10 s is a hang; -rss_limit_mb: > 2 GiB is a memory blow-up.
  "$bin" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=16384 -print_final_stats=1 \
    -artifact_prefix="$build/fuzz-artifacts/$t-" "$work" "$here/corpus/$t" > "$log" 2>&1
  rc=$?
  secs=$(( $(date +%s) - start ))
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  execs=${execs:-0}
  total_execs=$((total_execs + execs))
  total_secs=$((total_secs + secs))
  verdict=ok
  if [ $rc -ne 0 ]; then
    verdict="FAILED (rc $rc, see $log)"
    status=1
    grep -m 5 -E "ERROR|INVARIANT|runtime error|terminate|Test unit written" "$log" >&2
  fi
  line=$(printf '%-16s %10s execs %5s s  %s' "$t" "$execs" "$secs" "$verdict")
  echo "$line"
  summary+="$line"$'\n'
done
echo "---"
printf '%s' "$summary"
printf 'total: %s executions in %s s over %s targets\n' "$total_execs" "$total_secs" "${#targets[@]}"
exit $status
