#!/usr/bin/env bash
# Every #include "..." of the project points down or within its own library (docs/architecture.md):
#   traces <- sim <- policies <- experiments/replay <- sweep <- {learn, check, report} <- cli <- learn_cli
#   replay <- fidelity <- cli;  traces <- surrogate <- learn <- learn_cli;  <torch/...> only in surrogate/.
#   cli (the libtorch-free slurmtwin) includes neither learn nor surrogate.
#
#   check-layers.sh ROOT        exit 0 when every include is allowed, 1 listing each one that is not
#   check-layers.sh --self-test exit 0 when it catches an upward include planted in a scratch tree
set -euo pipefail

# Library (a top-level folder, or experiments/<folder>) -> the libraries its includes may name.
declare -A ALLOWED=(
  [traces]="traces"
  [sim]="sim traces"
  [policies]="policies sim traces"
  [surrogate]="surrogate traces"
  [experiments/replay]="experiments/replay policies sim traces"
  [experiments/sweep]="experiments/sweep experiments/replay policies sim traces"
  [experiments/fidelity]="experiments/fidelity experiments/replay policies sim traces"
  [experiments/learn]="experiments/learn experiments/sweep experiments/replay policies sim traces surrogate"
  [experiments/check]="experiments/check experiments/sweep experiments/replay policies sim traces"
  [experiments/report]="experiments/report experiments/sweep experiments/replay policies sim traces"
  [experiments/cli]="experiments/cli experiments/check experiments/fidelity experiments/report experiments/sweep experiments/replay policies sim traces"
  [experiments/learn_cli]="experiments/learn_cli experiments/cli experiments/check experiments/fidelity experiments/learn experiments/report experiments/sweep experiments/replay policies sim traces surrogate"
)

# The library a project path (e.g. experiments/sweep/sweep.hpp, sim/controller.hpp) belongs to.
library_of() {
  case $1 in
    experiments/*/*) echo "${1%/*}" ;;
    */*) echo "${1%%/*}" ;;
    *) echo "" ;;
  esac
}

check() {
  local root=$1 bad=0 file lib line target tlib
  cd "$root"
  for lib in "${!ALLOWED[@]}"; do
    [[ -d $lib ]] || continue
    while IFS= read -r file; do
      while IFS= read -r line; do
        if [[ $line =~ ^[[:space:]]*#[[:space:]]*include[[:space:]]*\<torch/ && $lib != surrogate ]]; then
          echo "$file: $line: libtorch is included only in surrogate/"
          bad=1
          continue
        fi
        [[ $line =~ ^[[:space:]]*#[[:space:]]*include[[:space:]]*\"([^\"]+)\" ]] || continue
        target=${BASH_REMATCH[1]}
        tlib=$(library_of "$target")
        if [[ $tlib == experiments ]]; then
          echo "$file: #include \"$target\": experiments/ keeps its files in one folder per layer"
          bad=1
          continue
        fi
        [[ -n $tlib && -n ${ALLOWED[$tlib]+x} ]] || continue  # a file of the same folder, or not a library
        if [[ " ${ALLOWED[$lib]} " != *" $tlib "* ]]; then
          echo "$file: #include \"$target\": $lib may not include $tlib"
          bad=1
        fi
      done < "$file"
    done < <(find "$lib" -maxdepth 1 -type f \( -name '*.cpp' -o -name '*.hpp' \) | sort)
  done
  return $bad
}

if [[ ${1:-} == --self-test ]]; then
  scratch=$(mktemp -d)
  trap 'rm -rf "$scratch"' EXIT
  mkdir -p "$scratch/experiments/replay" "$scratch/experiments/cli" "$scratch/sim"
  echo '#include "experiments/replay/replay.hpp"' > "$scratch/experiments/cli/ok.cpp"
  echo '#include "sim/controller.hpp"' > "$scratch/experiments/replay/ok.cpp"
  (check "$scratch") || { echo "self-test: a tree with only downward includes was refused" >&2; exit 1; }
  echo '#include "experiments/cli/cli.hpp"' > "$scratch/experiments/replay/up.cpp"
  echo '#include <torch/torch.h>' > "$scratch/sim/torch.cpp"
  # The libtorch-free slurmtwin: its CLI may not reach the surrogate's layer.
  echo '#include "experiments/learn/surrogate_sweep.hpp"' > "$scratch/experiments/cli/torch.cpp"
  out=$(check "$scratch") && { echo "self-test: upward includes were not caught" >&2; exit 1; }
  [[ $out == *"experiments/replay/up.cpp"*"may not include experiments/cli"* && $out == *"sim/torch.cpp"* &&
    $out == *"experiments/cli/torch.cpp"*"may not include experiments/learn"* ]] || {
    echo "self-test: unexpected report: $out" >&2
    exit 1
  }
  echo "self-test: the three planted includes caught"
  exit 0
fi
(($# == 1)) || {
  echo "usage: check-layers.sh ROOT | --self-test" >&2
  exit 2
}
if check "$1"; then
  echo "layers: every include points down"
else
  exit 1
fi
