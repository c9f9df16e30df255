#!/usr/bin/env bash
# Builds a walkthrough doc from its template by running the commands in it, so that every command and
# every output the doc shows is what the current build prints (`make docs`; a test runs --check).
#
#   gen-doc.sh SLURMTWIN TEMPLATE OUTPUT           write OUTPUT
#   gen-doc.sh SLURMTWIN TEMPLATE OUTPUT --check   exit 1 when OUTPUT is not what the template gives
#                                                  now (run times and file sizes masked); exit 77
#                                                  (skipped) when ../shared/data is absent
# Template blocks (everything else is copied as it is):
#   ```sh run        run from the repository root with bash -e -o pipefail, after the VAR=value lines
#                    of the run blocks before it; written as ```sh, then a ```text block of what it
#                    printed (stdout and stderr); B is set to SLURMTWIN
#   ```sh run numbers-vary
#                    the same, for output whose figures depend on the machine (a model trained on its
#                    CPU): --check compares that block's text with every number masked
#   ```yaml file=P   written to P (relative to the repository root), then shown as ```yaml
#   ```sh file=P     the same for a script (shown as ```sh; a run block may run it)
# Outputs go to gs/ (git-ignored), emptied first.
set -euo pipefail
(($# >= 3)) || {
  echo "usage: gen-doc.sh SLURMTWIN TEMPLATE OUTPUT [--check]" >&2
  exit 2
}
BIN="$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"
TEMPLATE=$2
OUTPUT=$3
CHECK=${4:-}
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
if [[ $CHECK == --check && ! -d ../shared/data/ub_medium ]]; then
  echo "SKIPPED: $OUTPUT needs ../shared/data/ub_medium"
  exit 77
fi
export TZ=UTC  # outputs print times; the doc's were made in UTC
rm -rf gs && mkdir gs

# Written before a numbers-vary block's ```sh (invisible in rendered Markdown): the mask finds it there.
VARY_MARK='<!-- gen-doc: the numbers of the next output vary by machine -->'
generated=$(mktemp)
block=$(mktemp)
trap 'rm -f "$generated" "$block"' EXIT
prelude="B=$BIN"
mode=copy # copy | run | file
file_path=
while IFS= read -r line || [[ -n $line ]]; do
  case $mode in
    copy)
      if [[ $line == '```sh run' || $line == '```sh run numbers-vary' ]]; then
        mode=run
        : > "$block"
        [[ $line == *numbers-vary ]] && echo "$VARY_MARK" >> "$generated"
      elif [[ $line =~ ^\`\`\`(yaml|sh)\ file=(.+)$ ]]; then
        mode=file
        file_path=${BASH_REMATCH[2]}
        : > "$block"
        echo '```'"${BASH_REMATCH[1]}" >> "$generated"
      else
        echo "$line" >> "$generated"
      fi
      ;;
    file)
      if [[ $line == '```' ]]; then
        mkdir -p "$(dirname "$file_path")"
        cp "$block" "$file_path"
        echo '```' >> "$generated"
        mode=copy
      else
        echo "$line" >> "$generated"
        echo "$line" >> "$block"
      fi
      ;;
    run)
      if [[ $line == '```' ]]; then
        {
          echo '```sh'
          cat "$block"
          echo '```'
          echo '```text'
        } >> "$generated"
        if ! bash -e -o pipefail -c "$prelude"$'\n'"$(cat "$block")" >> "$generated" 2>&1; then
          echo "gen-doc.sh: a command of $TEMPLATE failed:" >&2
          cat "$block" >&2
          tail -5 "$generated" >&2
          exit 1
        fi
        echo '```' >> "$generated"
        # the variables it set hold for the blocks after it
        while IFS= read -r l; do
          [[ $l =~ ^[A-Z][A-Z0-9_]*= ]] && prelude+=$'\n'"${l%%#*}"
        done < "$block"
        mode=copy
      else
        echo "$line" >> "$block"
      fi
      ;;
  esac
done < "$TEMPLATE"
[[ $mode == copy ]] || {
  echo "gen-doc.sh: $TEMPLATE ends inside a block" >&2
  exit 1
}
# The build's absolute path is not part of the doc.
sed -i "s#$BIN#build/experiments/slurmtwin#g" "$generated"

if [[ $CHECK != --check ]]; then
  cp "$generated" "$OUTPUT"
  echo "$OUTPUT written"
  exit 0
fi
# Run times (12 s, 1m05s), rates (0.931 or 12 replays/s: the digits shown follow the size) and file
# sizes change from run to run; everything else must be the same bytes. A
# progress line with an ETA is printed every few seconds of a long step (experiments/replay/progress.hpp),
# so how many there are depends on the machine's load: they are left out of the comparison.
# In a numbers-vary block's output every number is masked, and so is training's " *" (a validation
# better than the last best: which ones are depends on the figures).
mask() {
  sed -E '/, ETA [0-9?]/d; s/([0-9]+h)?([0-9]+m)?[0-9]+(\.[0-9]+)? ?s\b/N s/g; s/[0-9.]+ ([a-z]+)\/s/N \1\/s/g; s/\([0-9]+ KiB\)/(N KiB)/g' "$1" |
    awk -v mark="$VARY_MARK" '
      $0 == mark { vary = 1; print; next }
      vary == 1 && $0 == "```text" { vary = 2; print; next }
      vary == 2 && $0 == "```" { vary = 0 }
      vary == 2 { gsub(/[0-9]+/, "N"); sub(/ +\*$/, "") }
      { print }'
}
if ! diff <(mask "$OUTPUT") <(mask "$generated"); then
  echo "$OUTPUT is not what $TEMPLATE gives with this build: run \`make docs\`" >&2
  exit 1
fi
echo "$OUTPUT matches $TEMPLATE"
