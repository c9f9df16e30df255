#!/usr/bin/env bash
# Builds slurmtwin-torch against a CUDA libtorch and times `surrogate train` on the CPU and the GPU.
# For a lent GPU machine with PyTorch but without this project's Debian -dev packages: it unpacks the
# .deb files in DEBS into a prefix of its own, never into /. Fetch them beforehand, here:
#   mkdir .devdeps && cd .devdeps && apt-get download libboost1.74-dev libboost-program-options1.74-dev \
#     libboost-program-options1.74.0 libboost-graph1.74-dev libboost-graph1.74.0 libeigen3-dev \
#     libyaml-cpp-dev libyaml-cpp0.7 libfmt-dev libfmt9 libsqlite3-dev zlib1g-dev liblzma-dev
# Figures go to stdout; the logs (logs.tgz) and the checkpoints to OUT, to be evaluated elsewhere
# (`surrogate eval` on the CPU reads a checkpoint trained on the GPU). A run that is already built
# skips the build, so the runs can be split over calls.
#   usage: bash cmake/gpu-bench.sh DATASET.stsd[.xz] [RUN...]
#   RUN: cpu1 cpu16 (250 steps of the recipe on 1 and on every CPU thread), gpu_recipe gpu_seed2
#   gpu_seed3 (the recipe, 6,000 steps, seeds 1-3), gpu_spp64 (64 settings per step), gpu_large (a
#   model 4x as wide and twice as deep, 10,750 steps); default: all, about 11 min after the build.
# Environment: DEBS (default .devdeps), OUT (default /tmp/gpu-bench), BUILD (default build-gpu).
set -uo pipefail
DATA=${1:?dataset}
shift
RUNS=${*:-cpu1 cpu16 gpu_recipe gpu_seed2 gpu_seed3 gpu_spp64 gpu_large}
DEBS=${DEBS:-.devdeps}
OUT=${OUT:-/tmp/gpu-bench}
BUILD=${BUILD:-build-gpu}
LOGS=/tmp/gpu-bench-logs
mkdir -p "$OUT" $LOGS
trap 'tar -C $LOGS -czf "$OUT/logs.tgz" .' EXIT
T0=$(date +%s)
elapsed() { echo $(($(date +%s) - T0)); }
log() { echo "[$(elapsed) s] $*"; }

log "machine: $(nproc) cores; $(nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader)"
log "$(g++ --version | head -1); $(cmake --version | head -1)"
TORCH_CMAKE=$(python3 -c 'import torch; print(torch.utils.cmake_prefix_path)') || exit 1
log "python torch: $(python3 -c 'import torch; print(torch.__version__, "cuda", torch.version.cuda)')"

# The project's Debian dependencies, unpacked into a prefix. Runtime libraries that the machine has
# itself (zlib, liblzma, SQLite) are not carried: their -dev links point at the machine's copies.
PREFIX=/tmp/slurmtwin-deps
if [ ! -d $PREFIX ]; then
  mkdir -p $PREFIX
  for f in "$DEBS"/*.deb; do dpkg -x "$f" $PREFIX; done
  LIB=$PREFIX/usr/lib/x86_64-linux-gnu
  for so in libz.so liblzma.so libsqlite3.so; do
    rm -f "$LIB/$so"
    real=$(ls /lib/x86_64-linux-gnu/$so.* /usr/lib/x86_64-linux-gnu/$so.* 2>/dev/null | head -1)
    if [ -n "$real" ]; then ln -s "$real" "$LIB/$so"; else log "no $so here: the static library is linked"; fi
  done
fi
[ -d /usr/local/cuda/bin ] && export PATH=/usr/local/cuda/bin:$PATH
export TORCH_CUDA_ARCH_LIST=9.0
GEN=$(command -v ninja >/dev/null && echo Ninja || echo "Unix Makefiles")
# MPI is not needed for training. The two Boost settings made the measured run (2026-11-26) find Boost
# under CMake 4, which has no FindBoost; cmake/Dependencies.cmake now asks for Boost's CONFIG package.
if [ ! -x $BUILD/experiments/slurmtwin-torch ]; then
  cmake -S . -B $BUILD -G "$GEN" -DCMAKE_BUILD_TYPE=Release -DSLURMTWIN_BUILD_TESTS=OFF \
    -DCMAKE_DISABLE_FIND_PACKAGE_MPI=ON -DCMAKE_POLICY_DEFAULT_CMP0167=NEW \
    -DBoost_DIR=$PREFIX/usr/lib/x86_64-linux-gnu/cmake/Boost-1.74.0 \
    -DCMAKE_PREFIX_PATH="$PREFIX/usr;$TORCH_CMAKE" >"$LOGS/configure.log" 2>&1 ||
    { tail -40 "$LOGS/configure.log"; exit 1; }
  log "configured"
  cmake --build $BUILD -j "$(nproc)" --target slurmtwin-torch >"$LOGS/build.log" 2>&1 ||
    { grep -m 20 -B 2 -A 6 "error" "$LOGS/build.log"; tail -20 "$LOGS/build.log"; exit 1; }
  log "built"
fi
B=$BUILD/experiments/slurmtwin-torch
$B surrogate info

case "$DATA" in  # carried compressed (a tree that travels is limited); python3 has lzma where xz is not
  *.xz) python3 -c 'import lzma, shutil, sys; shutil.copyfileobj(lzma.open(sys.argv[1]), open(sys.argv[2], "wb"))' \
          "$DATA" /tmp/data.stsd && DATA=/tmp/data.stsd ;;
esac
# The documented recipe (docs/surrogate.md) and the figure each run prints: "(N steps/s)".
RECIPE="--lr 1e-3 --within-weight 5 --ema 0.999 --eval-every 250 --patience 100"  # and 16 settings per step
train() {  # train NAME ARGS...: one run, its log kept, its speed printed
  local name=$1
  shift
  $B surrogate train --data "$DATA" -o "$OUT/$name.ckpt" $RECIPE "$@" >"$LOGS/$name.log" 2>&1
  local rc=$?
  log "$name (rc $rc): $(grep -E '^trained on|error' "$LOGS/$name.log" | head -2)"
  return $rc
}

LARGE="--d-model 256 --heads 8 --encoder-layers 4 --conditioned-layers 0 --ffn 1024"
for run in $RUNS; do
  case $run in
    cpu1) train cpu1 --device cpu --threads 1 --steps 250 --settings-per-step 16 ;;
    cpu16) train cpu16 --device cpu --threads "$(nproc)" --steps 250 --settings-per-step 16 ;;
    gpu_recipe) train gpu_recipe --device cuda --steps 6000 --seed 1 --settings-per-step 16 ;;
    gpu_seed2) train gpu_seed2 --device cuda --steps 6000 --seed 2 --settings-per-step 16 ;;
    gpu_seed3) train gpu_seed3 --device cuda --steps 6000 --seed 3 --settings-per-step 16 ;;
    gpu_spp64) train gpu_spp64 --device cuda --steps 6000 --seed 1 --settings-per-step 64 ;;
    gpu_large) train gpu_large --device cuda --steps 10750 --seed 1 --settings-per-step 16 $LARGE ;;
    *) log "unknown run $run" && exit 2 ;;
  esac
done
rm -f "$OUT"/cpu1.ckpt "$OUT"/cpu16.ckpt
log "done"
