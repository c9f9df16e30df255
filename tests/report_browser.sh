#!/usr/bin/env bash
# Opens `slurmtwin report` output (a replay and a small sweep) in headless Chromium: every plot must
# render (the page's optional script counts SVG plots with a non-empty box), the console must stay
# silent (no script error, no blocked fetch), and a screenshot of each page is saved.
# Usage: report_browser.sh SLURMTWIN_BINARY OUT_DIR. Exit 77 (ctest: skipped) when chromium is absent.
set -euo pipefail
bin=$1
out=$2
if ! command -v chromium > /dev/null; then
  echo "SKIPPED: chromium is not installed (Debian package 'chromium'; 'make test-browser' installs it)"
  exit 77
fi
rm -rf "$out"
mkdir -p "$out"

"$bin" replay --out "$out/run" > "$out/replay.txt"
"$bin" report "$out/run" -o "$out/replay.html"
cat > "$out/sweep.yaml" << 'SPEC'
site: {default_cpu_nodes: 16}
trace: {synthetic: {seed: 1, days: 1}}
parameters:
  PriorityWeightAge: [0, 10000]
  PriorityWeightFairshare: [100, 100000]
objectives:
  - {metric: wait_mean, goal: min}
  - {metric: utilisation, goal: max}
SPEC
"$bin" sweep run "$out/sweep.yaml" --db "$out/sweep.db" -j 1 > /dev/null 2>&1
"$bin" report "$out/sweep.db" -o "$out/sweep.html"

browse() {  # browse PAGE EXTRA_ARGS...: chromium headless on a local file, its log in $out/PAGE.log
  local page=$1
  shift
  local profile
  profile=$(mktemp -d)
  timeout 120 chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
    --disable-background-networking --disable-component-update --disable-sync --user-data-dir="$profile" \
    --enable-logging=stderr --v=0 "$@" "file://$out/$page.html" 2>> "$out/$page.log"
  rm -rf "$profile"
}

status=0
for page in replay sweep; do
  : > "$out/$page.log"
  browse "$page" --dump-dom > "$out/$page.dom"
  browse "$page" --window-size=1280,5200 --screenshot="$out/$page.png" > /dev/null
  body=$(grep -o '<body[^>]*>' "$out/$page.dom" | head -1)
  plots=$(sed -n 's/.*data-plots="\([0-9]*\)".*/\1/p' <<< "$body")
  rendered=$(sed -n 's/.*data-plots-rendered="\([0-9]*\)".*/\1/p' <<< "$body")
  # Chromium logs every console message (error or not) as ...:CONSOLE...; the report logs none.
  console=$(grep -c ':CONSOLE' "$out/$page.log" || true)
  size=$(stat -c %s "$out/$page.png" 2> /dev/null || echo 0)
  echo "$page: $plots plots, ${rendered:-none} rendered, $console console messages, screenshot $out/$page.png ($size bytes)"
  if [ -z "$plots" ] || [ "$plots" -eq 0 ] || [ "$plots" != "$rendered" ]; then
    echo "FAIL: $page: plots did not all render"
    status=1
  fi
  if [ "$console" -ne 0 ]; then
    echo "FAIL: $page: console messages:"
    grep ':CONSOLE' "$out/$page.log"
    status=1
  fi
  if [ "$size" -lt 10000 ]; then
    echo "FAIL: $page: no screenshot"
    status=1
  fi
done
exit $status
