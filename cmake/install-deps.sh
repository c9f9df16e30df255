#!/usr/bin/env bash
# Installs the Debian packages SlurmTwin builds with, only those missing. Idempotent; needs root
# (or sudo) only when something is missing.
set -euo pipefail
packages=(cmake make g++ pkg-config
  libboost-graph-dev libboost-program-options-dev libeigen3-dev
  libtorch-dev libopenblas0-pthread
  libyaml-cpp-dev libfmt-dev doctest-dev zlib1g-dev liblzma-dev xz-utils libsqlite3-dev
  libopenmpi-dev openmpi-bin
  dpkg-dev  # make package: dpkg-shlibdeps computes the packages' dependencies
  tzdata)  # sacct prints local time: --timezone converts it with the zone database
# `make fuzz`: clang with libFuzzer and the sanitizer runtimes as well. Other arguments: install the
# packages named instead (e.g. `install-deps.sh chromium` for the report test).
if [ "${1:-}" = "--fuzz" ]; then
  packages+=(clang libclang-rt-14-dev)
elif [ $# -gt 0 ]; then
  packages=("$@")
fi
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then exit 0; fi
echo "installing Debian packages: ${missing[*]}"
sudo=""
if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
