#pragma once
// Which stored sweep points meet a spec's constraints, and, when none does, how close they came; where
// the site's current settings stand: what sweep show and the sweep report say about them, computed in
// one place.
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "experiments/sweep/sweep_spec.hpp"
#include "experiments/sweep/sweep_store.hpp"

namespace slurmtwin::experiments {

/// One constraint over the points assessed.
struct ConstraintRange {
  double lo = 0, hi = 0;  // observed range of its metric over the points with a value (NaN: none has)
  std::size_t met = 0;    // points that meet it
};

struct Feasibility {
  std::vector<bool> feasible;                // per point: meets every constraint (no value: fails)
  std::size_t count = 0;                     // feasible points
  std::vector<ConstraintRange> constraints;  // per constraint, in the store's order
  // With constraints and no feasible point: the point that misses them by least (the sum over the
  // constraints of its shortfall divided by the constraint's scale: |bound|, or the observed range
  // when that is larger; a point without a value misses by an unbounded amount).
  std::optional<std::size_t> closest;
};

/// `rows[i].constraint_values` follow `constraints`. `consider[i]` false leaves point i out (not
/// feasible, not in the ranges); empty: every point counts.
Feasibility assess_constraints(const std::vector<SweepRow>& rows,
                               const std::vector<SweepConstraint>& constraints,
                               const std::vector<bool>& consider = {});

/// Where the site's current settings stand among a sweep's points ("you are here").
struct Standing {
  std::optional<std::size_t> row;   // its row; none when the sweep has not evaluated it yet
  std::vector<std::size_t> broken;  // the constraints it breaks (indices)
  std::size_t better = 0;           // candidate points better or equal in every objective, better in one
  std::vector<std::size_t> best;    // per objective, the candidate with the best value (rows.size(): none)
};
/// "1 point of the sweep does better in every objective" / "N points ... do ...": Standing::better said.
std::string better_points_text(std::size_t better);
/// `key`: the current point's key (SweepStore::current); `candidates`: the rows the best points and the
/// front are drawn from (feasible, every objective known).
Standing assess_current(const std::vector<SweepRow>& rows, const std::string& key,
                        const std::vector<SweepConstraint>& constraints,
                        const std::vector<std::size_t>& candidates, const std::vector<Goal>& goals);

/// Whether objective `k` of rows `a` and `b` differ by more than phase noise: by more than two standard
/// errors of the difference (about a 95% two-sided test of equal means); nullopt without standard
/// errors (one replay per point).
std::optional<bool> resolved(const SweepRow& a, const SweepRow& b, std::size_t k);

/// How far `value` falls short of `c`, in `c`'s metric (0 when it holds; +inf for no value).
double shortfall(const SweepConstraint& c, double value);

}  // namespace slurmtwin::experiments
