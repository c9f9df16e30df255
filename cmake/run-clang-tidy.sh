#!/usr/bin/env bash
# clang-tidy with the project's .clang-tidy over every library and executable source (tests/ are left
# out: doctest's macros trip several checks), from BUILD's compile_commands.json, one process per core.
# Any finding is an error (`make tidy`; CI runs it).
#
#   run-clang-tidy.sh BUILD [FILE...]   (default: every .cpp under traces sim policies surrogate experiments
#                                        that does not include libtorch)
set -euo pipefail
(($# >= 1)) || {
  echo "usage: run-clang-tidy.sh BUILD [FILE...]" >&2
  exit 2
}
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="$(cd "$1" && pwd)"
shift
[[ -f $BUILD/compile_commands.json ]] || {
  echo "run-clang-tidy.sh: $BUILD/compile_commands.json is missing (configure first)" >&2
  exit 2
}
TIDY=$(command -v clang-tidy || command -v clang-tidy-14) || {
  echo "run-clang-tidy.sh: clang-tidy is not installed (cmake/install-deps.sh clang-tidy)" >&2
  exit 2
}
cd "$ROOT"
if (($# == 0)); then
  # Files that include libtorch are left out: clang 14 cannot parse libtorch 1.13's headers.
  mapfile -t files < <(git ls-files 'traces/*.cpp' 'sim/*.cpp' 'policies/*.cpp' 'surrogate/*.cpp' 'experiments/*.cpp' |
    xargs grep -L '#include <torch/')
else
  files=("$@")
fi
log=$(mktemp)
trap 'rm -f "$log"' EXIT
start=$SECONDS
# GCC's warning flags in compile_commands.json (-Wshadow=local, ...) are unknown to clang.
if ! printf '%s\n' "${files[@]}" | xargs -P "$(nproc)" -n 1 "$TIDY" -p "$BUILD" --quiet \
  --extra-arg=-Wno-unknown-warning-option --header-filter="^$ROOT/(traces|sim|policies|surrogate|experiments)/" \
  >"$log" 2>&1; then
  grep -E 'warning:|error:' -A3 "$log" | head -200
  echo "clang-tidy: findings in the sources above (.clang-tidy lists the checks)" >&2
  exit 1
fi
echo "clang-tidy: ${#files[@]} files clean in $((SECONDS - start)) s"
