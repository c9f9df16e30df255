#!/bin/bash
# Issue 26, "where a learned surrogate should win": new weeks (and, with PARAMS=13, a wide setting space).
# Trains on weeks 1-6 of a synthetic 8-week trace (the built-in site and workload, seed 3) and asks about
# weeks 7-8, which no replay of the training data saw, with one exact replay of them at the site's own
# setting (the reference features). Figures: docs/log/surrogate.md, "New weeks". Run from the repository
# root after `make`; writes into $OUT (default /tmp/new-weeks). About 20 min of replays with -j 2 on
# the project's 2-core VM and 15-20 min of training. SEED (default 3) picks the synthetic trace;
# PHASE4=0 leaves out the 4-phase targets (most of the replays). eval is given the trace so that its
# per-group table names the accounts (docs/log/surrogate.md, "Per-group objectives on the new weeks").
set -euo pipefail
B=${B:-$PWD/build/experiments/slurmtwin}
OUT=${OUT:-/tmp/new-weeks}
PARAMS=${PARAMS:-6}
SEED=${SEED:-3}
mkdir -p "$OUT" && cd "$OUT"
if [ "$PARAMS" = 13 ]; then
  P="--param PriorityWeightAge=0:100000 --param PriorityWeightFairshare=0:100000
     --param PriorityWeightJobSize=0:100000 --param PriorityWeightPartition=0:100000
     --param PriorityWeightQOS=0:100000 --param PriorityWeightAssoc=0:100000
     --param PriorityWeightTRES/gres/gpu=0:100000 --param PriorityWeightTRES/mem=0:10
     --param QOS/normal/Priority=0:1000 --param PriorityMaxAge=3600:1209600
     --param PriorityDecayHalfLife=3600:2419200 --param PriorityFavorSmall=0:1
     --param bf_max_job_test=50:1000"
  TRAIN_SETTINGS=128 SUFFIX=13
else
  P="" TRAIN_SETTINGS=160 SUFFIX=""  # the six PriorityWeight* over 0:100000
fi
$B trace generate --seed "$SEED" --days 56 -o all.stt
$B trace convert all.stt --to +42-00:00:00 -o train.stt
$B trace convert all.stt --from +42-00:00:00 -o test.stt
W="--window-jobs 384 --context-jobs 128 --reference"
# shellcheck disable=SC2086
{
  $B surrogate dataset --trace train.stt $W --settings $TRAIN_SETTINGS $P -o train$SUFFIX.stsd
  # New weeks and new settings (another design seed); the floor: the same with slurmctld started 30 s earlier.
  $B surrogate dataset --trace test.stt $W --settings 64 --design-seed 2 $P -o test$SUFFIX.stsd
  $B surrogate dataset --trace test.stt $W --settings 64 --design-seed 2 --start-offset 30 $P \
    -o test${SUFFIX}_floor.stsd
}
$B surrogate train --data train$SUFFIX.stsd -o weeks$SUFFIX.ckpt --lr 1e-3 --steps 6000 --eval-every 250 \
  --patience 100 --settings-per-step 16 --within-weight 5 --ema 0.999
$B surrogate eval --model weeks$SUFFIX.ckpt --data test$SUFFIX.stsd --part all --trace test.stt \
  --noise-floor test${SUFFIX}_floor.stsd --bootstrap 200 --decision-orders 20 --json eval$SUFFIX.json
# The expected-wait target: each job's wait averaged over 4 timer phases, and its floor 30 s later.
[ "${PHASE4:-1}" = 0 ] && exit 0
# shellcheck disable=SC2086
{
  $B surrogate dataset --trace test.stt $W --settings 64 --design-seed 2 --phases 4 $P -o test${SUFFIX}_p4.stsd
  $B surrogate dataset --trace test.stt $W --settings 64 --design-seed 2 --phases 4 --start-offset 30 $P \
    -o test${SUFFIX}_p4_floor.stsd
}
$B surrogate eval --model weeks$SUFFIX.ckpt --data test${SUFFIX}_p4.stsd --part all --trace test.stt \
  --noise-floor test${SUFFIX}_p4_floor.stsd --bootstrap 200 --decision-orders 20 --json eval${SUFFIX}_p4.json
# TRAIN_PHASES=2: also a model trained on 2-phase targets of the training weeks (about 27 min more).
if [ "${TRAIN_PHASES:-1}" = 2 ]; then
  # shellcheck disable=SC2086
  $B surrogate dataset --trace train.stt $W --settings $TRAIN_SETTINGS --phases 2 $P -o train${SUFFIX}_p2.stsd
  $B surrogate train --data train${SUFFIX}_p2.stsd -o weeks${SUFFIX}_p2.ckpt --lr 1e-3 --steps 6000 \
    --eval-every 250 --patience 100 --settings-per-step 16 --within-weight 5 --ema 0.999
  $B surrogate eval --model weeks${SUFFIX}_p2.ckpt --data test${SUFFIX}_p4.stsd --part all --trace test.stt \
    --noise-floor test${SUFFIX}_p4_floor.stsd --bootstrap 200 --decision-orders 20 \
    --json eval${SUFFIX}_p2model_p4.json
fi
