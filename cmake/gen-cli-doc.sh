#!/usr/bin/env bash
# Writes docs/cli.md from the CLI's own --help, so the page lists exactly what the binary accepts.
# Usage: gen-cli-doc.sh SLURMTWIN_BINARY            (Markdown on stdout; `make cli-doc` writes the file)
#        gen-cli-doc.sh SLURMTWIN_BINARY --check FILE (exit 1 when FILE differs: the ctest test)
set -euo pipefail
bin=$1
generate() {
  echo "# Command-line reference"
  echo
  echo "Generated from \`slurmtwin --help\` and every \`slurmtwin COMMAND [SUB] --help\` by"
  echo "\`cmake/gen-cli-doc.sh\` (\`make cli-doc\`); a test fails when it differs from the binary's help."
  echo "Exit codes of every command: 0 success, 1 the command ran and found a failure (e.g. a regression"
  echo "in \`check\`), 2 bad usage or bad input (with \`file:line: field: what is wrong\`)."
  echo
  echo '```text'
  "$bin" --help
  echo '```'
  local cmd sub
  for cmd in $("$bin" --help | sed -n 's/^  \([a-z][a-z-]*\) .*/\1/p'); do
    echo
    echo "## slurmtwin $cmd"
    echo
    echo '```text'
    "$bin" "$cmd" --help
    echo '```'
    # Subcommands: lower-case words after "slurmtwin CMD " in the usage lines ("info|generate|convert").
    for sub in $("$bin" "$cmd" --help | sed -n "s/.*slurmtwin $cmd \([a-z][a-z|]*\)\( .*\)\?$/\1/p" | tr '|' ' '); do
      echo
      echo "### slurmtwin $cmd $sub"
      echo
      echo '```text'
      "$bin" "$cmd" "$sub" --help
      echo '```'
    done
  done
}
if [ "${2:-}" = "--check" ]; then
  if ! diff -u "$3" <(generate); then
    echo "FAIL: $3 differs from the CLI's help: run 'make cli-doc' and commit docs/cli.md"
    exit 1
  fi
  echo "$3 matches the CLI's help"
else
  generate
fi
