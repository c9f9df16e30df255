#pragma once
// slurmtwin optimize: search the spec's setting space for the best value of one objective under the
// spec's constraints, over the surrogate (a space-filling design, then rounds of local perturbation
// around the best candidates), then verify the winners and the site's current setting with the exact
// simulator and report the verified improvement. docs/surrogate.md ("Surrogate in the loop").
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "experiments/learn/surrogate_engine.hpp"
#include "experiments/sweep/sweep.hpp"

namespace slurmtwin::experiments {

struct OptimizeOptions {
  std::size_t candidates = 512;  // first round: a Latin hypercube of this many points
  std::size_t rounds = 4;        // then this many rounds of local search ...
  std::size_t keep = 8;          // ... around the best `keep` candidates ...
  std::size_t per_keep = 16;     // ... with this many perturbations each
  double step = 0.1;  // first perturbation (standard deviation, in units of each range), halved per round
  std::size_t verify = 5;  // the best this many predicted-feasible candidates are replayed exactly
  std::uint64_t seed = 1;
  unsigned jobs = 1;  // exact replays in parallel; libtorch threads
  SurrogateEngineOptions surrogate;
};

struct OptimizeCandidate {
  SweepPoint point;
  double predicted = 0, predicted_lo = 0, predicted_hi = 0;  // the objective
  bool predicted_feasible = false;
  bool verified = false;  // replayed exactly
  double exact = 0;       // the objective, exactly (when verified; the mean over the spec's replicates)
  double exact_se = std::numeric_limits<double>::quiet_NaN();  // its standard error (NaN: one replay)
  bool exact_feasible = false;
  std::vector<double> exact_constraints;  // constraint metrics, exactly
};

struct OptimizeResult {
  SweepObjective objective;
  std::vector<SweepConstraint> constraints;
  OptimizeCandidate current;                // the site's own setting (always verified)
  std::vector<OptimizeCandidate> verified;  // the winners, best predicted first
  std::size_t scored = 0;                   // points the surrogate scored
  double surrogate_seconds = 0, exact_seconds = 0;
  /// The best verified feasible candidate (index into `verified`), or -1 when none is feasible.
  int best = -1;
  double improvement_pct = 0;  // of the best over the current setting, in the objective's direction
};

/// Optimises `spec.objectives[0]` under `spec.constraints` over the spec's parameters (ranges, or
/// value lists). Deterministic per seed.
OptimizeResult optimize(const SweepSpec& spec, const OptimizeOptions& options);
std::string optimize_markdown(const OptimizeResult& r);

}  // namespace slurmtwin::experiments
