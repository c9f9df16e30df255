#!/usr/bin/env bash
# The Debian packages of `make package`, checked as an admin would get them.
#
#   package-test.sh BUILD_DIR [--install]
#
# Builds both packages with CPack into a scratch folder, checks their dependencies (slurmtwin without
# libtorch; slurmtwin-surrogate on libtorch and on slurmtwin of its version), unpacks slurmtwin into a
# clean directory and replays the built-in default there, checks that a surrogate command says
# slurmtwin-torch is missing, unpacks slurmtwin-surrogate beside it and checks that the same command
# now runs. --install (CI): also installs both with dpkg, replays with /usr/bin/slurmtwin, and
# removes them again (skipped, saying so, when not root). Exit 77 (skipped) without dpkg-deb,
# dpkg-shlibdeps or cpack.
set -euo pipefail
build=$(cd "$1" && pwd)
install=${2:-}
for tool in dpkg-deb dpkg-shlibdeps cpack; do
  command -v "$tool" > /dev/null || {
    echo "SKIPPED: no $tool (apt-get install dpkg-dev cmake)"
    exit 77
  }
done
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
fail() {
  echo "package-test: FAILED: $*" >&2
  exit 1
}

(cd "$build" && cpack -G DEB -B "$scratch/pkgs" > "$scratch/cpack.log" 2>&1) || {
  cat "$scratch/cpack.log"
  fail "cpack"
}
core=$(ls "$scratch"/pkgs/slurmtwin_*.deb)
surrogate=$(ls "$scratch"/pkgs/slurmtwin-surrogate_*.deb)
version=$(dpkg-deb -f "$core" Version)
dpkg-deb -f "$core" Depends | grep -q libtorch && fail "slurmtwin depends on libtorch"
dpkg-deb -f "$surrogate" Depends | grep -q libtorch || fail "slurmtwin-surrogate does not depend on libtorch"
dpkg-deb -f "$surrogate" Depends | grep -qF "slurmtwin (= $version)" ||
  fail "slurmtwin-surrogate does not depend on slurmtwin (= $version)"

root="$scratch/root"
dpkg-deb -x "$core" "$root"
"$root/usr/bin/slurmtwin" replay --out "$scratch/replay" > "$scratch/replay.log" 2>&1 ||
  fail "replay from the unpacked slurmtwin: $(tail -3 "$scratch/replay.log")"
[[ -s "$scratch/replay/jobs.csv" ]] || fail "the replay wrote no jobs.csv"
if "$root/usr/bin/slurmtwin" version --torch > "$scratch/torch.log" 2>&1; then
  fail "version --torch ran without slurmtwin-surrogate"
fi
grep -q "slurmtwin-torch: not there" "$scratch/torch.log" || fail "no word of the missing slurmtwin-torch"
dpkg-deb -x "$surrogate" "$root"
"$root/usr/bin/slurmtwin" version --torch > "$scratch/torch.log" 2>&1 || fail "version --torch with slurmtwin-surrogate"
grep -q "^libtorch " "$scratch/torch.log" || fail "version --torch printed no libtorch line"
echo "package-test: slurmtwin $version and slurmtwin-surrogate unpacked, replayed, surrogate found"

if [[ $install == --install ]]; then
  if [[ $(id -u) != 0 ]]; then
    echo "SKIPPED: package-test --install (dpkg -i needs root)"
    exit 0
  fi
  dpkg -i "$core" "$surrogate" > "$scratch/dpkg.log" 2>&1 || {
    cat "$scratch/dpkg.log"
    fail "dpkg -i"
  }
  trap 'dpkg -r slurmtwin-surrogate slurmtwin > /dev/null 2>&1 || true; rm -rf "$scratch"' EXIT
  /usr/bin/slurmtwin replay --out "$scratch/installed" > "$scratch/replay2.log" 2>&1 || fail "installed replay"
  cmp -s "$scratch/replay/jobs.csv" "$scratch/installed/jobs.csv" || fail "installed replay differs"
  /usr/bin/slurmtwin version --torch | grep -q "^libtorch " || fail "installed version --torch"
  dpkg -r slurmtwin-surrogate slurmtwin > /dev/null
  [[ ! -e /usr/bin/slurmtwin && ! -e /usr/bin/slurmtwin-torch ]] || fail "dpkg -r left the binaries"
  echo "package-test: installed with dpkg, replayed, removed"
fi
