#include "experiments/learn/optimize.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <random>
#include <set>
#include <tuple>

#include "experiments/learn/surrogate_data.hpp"
#include "experiments/learn/surrogate_engine.hpp"
#include "experiments/replay/parallel.hpp"
#include "experiments/replay/replay.hpp"
#include "experiments/replay/stopwatch.hpp"

namespace slurmtwin::experiments {
namespace {

// A range parameter's value -> [0, 1] (log scales map the log of the value): the inverse of
// parameter_value (sweep_spec.hpp), which maps back.
double to_unit(const SweepParameter& p, double v) {
  if (p.scale == SweepScale::kLog) return (std::log(v) - std::log(p.lo)) / (std::log(p.hi) - std::log(p.lo));
  return (v - p.lo) / (p.hi - p.lo);
}
double from_unit(const SweepParameter& p, double u) {
  return std::clamp(parameter_value(p, std::clamp(u, 0.0, 1.0)), p.lo, p.hi);
}

bool better(Goal goal, double a, double b) {
  return goal == Goal::kMin ? a < b : a > b;
}

}  // namespace

OptimizeResult optimize(const SweepSpec& spec, const OptimizeOptions& o) {
  if (spec.objectives.empty()) throw std::invalid_argument("optimize: the spec has no objective");
  OptimizeResult r;
  r.objective = spec.objectives.front();
  r.constraints = spec.constraints;
  const Site base = load_sweep_site(spec);
  SweepPlan plan;
  plan.trace = load_sweep_trace(spec);
  plan.fingerprint = trace_fingerprint(plan.trace);
  std::vector<std::string> warnings;
  const auto t_sur = std::chrono::steady_clock::now();
  SurrogateEngineOptions so = o.surrogate;
  if (so.threads == 0) so.threads = static_cast<int>(std::max(1u, o.jobs));
  const SurrogateEngine engine(spec, plan, so, warnings);

  // Every candidate scored so far, by point (no point is scored twice).
  std::vector<OptimizeCandidate> pool;
  std::set<SweepPoint> seen;
  const auto score = [&](std::vector<SweepPoint> points) {
    std::vector<Site> sites;
    std::vector<SweepPoint> fresh;
    for (auto& p : points) {
      if (!seen.insert(p).second) continue;
      Site s = base;
      apply_point(s, p);
      sites.push_back(std::move(s));
      fresh.push_back(std::move(p));
    }
    std::vector<const Site*> ptrs;
    for (const auto& s : sites) ptrs.push_back(&s);
    const auto preds = engine.predict_sites(ptrs);
    for (std::size_t k = 0; k < fresh.size(); ++k) {
      OptimizeCandidate c;
      c.point = fresh[k];
      const auto& m = preds[k].metrics;
      c.predicted = metric_value(m[1], r.objective.metric);
      const double a = metric_value(m[0], r.objective.metric), b = metric_value(m[2], r.objective.metric);
      c.predicted_lo = std::min(a, b);
      c.predicted_hi = std::max(a, b);
      c.predicted_feasible = true;
      for (const auto& con : r.constraints)
        c.predicted_feasible = c.predicted_feasible && constraint_holds(con, metric_value(m[1], con.metric));
      pool.push_back(std::move(c));
    }
    r.scored += fresh.size();
  };
  // Best first: feasible before infeasible, then by the predicted objective; ties by point.
  const auto rank = [&] {
    std::stable_sort(pool.begin(), pool.end(), [&](const auto& a, const auto& b) {
      if (a.predicted_feasible != b.predicted_feasible) return a.predicted_feasible;
      return better(r.objective.goal, a.predicted, b.predicted);
    });
  };

  SweepSpec design = spec;
  design.design = SweepDesign::kLhs;
  design.points = static_cast<std::uint32_t>(std::max<std::size_t>(1, o.candidates));
  design.seed = o.seed;
  score(design_points(design));
  rank();
  std::mt19937_64 rng(o.seed);
  std::normal_distribution<double> normal(0, 1);
  double step = o.step;
  for (std::size_t round = 0; round < o.rounds; ++round, step /= 2) {
    std::vector<SweepPoint> next;
    for (std::size_t k = 0; k < std::min(o.keep, pool.size()); ++k)
      for (std::size_t j = 0; j < o.per_keep; ++j) {
        SweepPoint p = pool[k].point;
        for (const auto& par : spec.parameters) {
          if (!par.values.empty()) {
            if (std::uniform_real_distribution<double>(0, 1)(rng) < 0.3)
              p[par.name] =
                  par.values[std::uniform_int_distribution<std::size_t>(0, par.values.size() - 1)(rng)];
          } else {
            p[par.name] = from_unit(par, to_unit(par, p[par.name]) + step * normal(rng));
          }
        }
        next.push_back(std::move(p));
      }
    score(std::move(next));
    rank();
  }
  r.surrogate_seconds = seconds_since(t_sur);

  // Verify: the best predicted-feasible candidates (or the best ones when none is) and the site's own.
  const auto t_exact = std::chrono::steady_clock::now();
  for (const auto& c : pool)
    if (r.verified.size() < o.verify && (c.predicted_feasible || !pool.front().predicted_feasible))
      r.verified.push_back(c);
  std::vector<OptimizeCandidate*> todo = {&r.current};
  for (auto& c : r.verified) todo.push_back(&c);
  ParallelOptions po;
  po.threads = o.jobs;
  parallel_for(
      todo.size(),
      [&](std::size_t i) {
        Site s = base;
        apply_point(s, todo[i]->point);
        // The spec's replicates: means over replays at spread timer phases, as a sweep stores them.
        std::vector<double> objective;
        std::vector<std::vector<double>> constraint(r.constraints.size());
        replay_replicates(s, plan.trace, spec.replicates, false, [&](Seconds, ReplayResult& res) {
          objective.push_back(metric_value(res.metrics, r.objective.metric));
          for (std::size_t k = 0; k < r.constraints.size(); ++k)
            constraint[k].push_back(metric_value(res.metrics, r.constraints[k].metric));
        });
        auto& c = *todo[i];
        c.verified = true;
        std::tie(c.exact, c.exact_se) = mean_and_standard_error(objective);
        c.exact_feasible = true;
        for (std::size_t k = 0; k < r.constraints.size(); ++k) {
          c.exact_constraints.push_back(mean_and_standard_error(constraint[k]).first);
          c.exact_feasible =
              c.exact_feasible && constraint_holds(r.constraints[k], c.exact_constraints.back());
        }
      },
      po);
  r.exact_seconds = seconds_since(t_exact);
  for (std::size_t k = 0; k < r.verified.size(); ++k)
    if (r.verified[k].exact_feasible &&
        (r.best < 0 ||
         better(r.objective.goal, r.verified[k].exact, r.verified[static_cast<std::size_t>(r.best)].exact)))
      r.best = static_cast<int>(k);
  if (r.best >= 0 && r.current.exact != 0) {
    const double b = r.verified[static_cast<std::size_t>(r.best)].exact;
    r.improvement_pct = 100 * (r.objective.goal == Goal::kMin ? r.current.exact - b : b - r.current.exact) /
                        std::abs(r.current.exact);
  }
  return r;
}

std::string optimize_markdown(const OptimizeResult& r) {
  const auto point_text = [](const SweepPoint& p) {
    if (p.empty()) return std::string("the site's own setting");
    std::string out;
    for (const auto& [k, v] : p) out += fmt::format("{}{}={:g}", out.empty() ? "" : " ", k, v);
    return out;
  };
  std::string constraints;
  for (const auto& c : r.constraints) constraints += (constraints.empty() ? "" : ", ") + c.text;
  std::string out = fmt::format(
      "# Optimise {} ({}){}\n\nThe surrogate scored {} settings in {:.1f} s; the exact simulator verified {} "
      "of "
      "them and the site's own setting in {:.1f} s.\n\n",
      r.objective.metric, r.objective.goal == Goal::kMin ? "min" : "max",
      constraints.empty() ? "" : " subject to " + constraints, r.scored, r.surrogate_seconds,
      r.verified.size(), r.exact_seconds);
  // With replicates, an exact value is a mean over timer phases and carries its standard error.
  const auto exact_text = [](const OptimizeCandidate& c) {
    return std::isnan(c.exact_se) ? fmt::format("{:.6g}", c.exact)
                                  : fmt::format("{:.6g} ± {:.3g}", c.exact, c.exact_se);
  };
  out += "| setting | predicted (80% interval) | exact | feasible (exact) |\n|---|---:|---:|---|\n";
  out += fmt::format("| {} | — | {} | {} |\n", point_text(r.current.point), exact_text(r.current),
                     r.current.exact_feasible ? "yes" : "no");
  for (std::size_t k = 0; k < r.verified.size(); ++k) {
    const auto& c = r.verified[k];
    out += fmt::format("| {}{} | {:.6g} ({:.6g} – {:.6g}) | {} | {} |\n", point_text(c.point),
                       static_cast<int>(k) == r.best ? " **(best)**" : "", c.predicted, c.predicted_lo,
                       c.predicted_hi, exact_text(c), c.exact_feasible ? "yes" : "no");
  }
  if (r.best < 0)
    out += "\nNo verified candidate meets the constraints: keep the current setting.\n";
  else {
    const auto& best = r.verified[static_cast<std::size_t>(r.best)];
    out += fmt::format("\nVerified improvement over the site's own setting: {:.2f}% ({:.6g} → {:.6g}).\n",
                       r.improvement_pct, r.current.exact, best.exact);
    // Two standard errors of the difference: about a 95% test that timer phase alone did not make it.
    if (const double sd = std::hypot(best.exact_se, r.current.exact_se); !std::isnan(sd))
      out += fmt::format("The difference is {} two standard errors ({:.3g}) of the phase noise.\n",
                         std::abs(best.exact - r.current.exact) > 2 * sd ? "beyond" : "within", 2 * sd);
  }
  return out;
}

}  // namespace slurmtwin::experiments
