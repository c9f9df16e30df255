#include "policies/priority.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <string_view>
#include <utility>

#include "policies/assoc_tree.hpp"

namespace slurmtwin::policies {
namespace {

/// Slurm's INFINITE time limit in minutes (0xffffffff), what an unlimited MaxTime divides by.
constexpr double kInfiniteMinutes = 4294967295.0;
constexpr Seconds kSecondsPerMinute = 60;

std::string upper(const std::string& text) {
  std::string out = text;
  for (auto& c : out) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return out;
}

/// Time limit in whole minutes as Slurm stores it (seconds round up).
double limit_minutes(Seconds limit) {
  if (limit == kUnlimited || limit == kUnsetTime) return kInfiniteMinutes;
  // NOLINTNEXTLINE(bugprone-integer-division): whole minutes, rounded up, as Slurm stores a limit
  return static_cast<double>((limit + kSecondsPerMinute - 1) / kSecondsPerMinute);
}

/// The weights in Slurm's TRES-array order (cpu, mem, energy, node, billing, then the rest by name)
/// so that the floating-point sum adds up in the same order as `_get_priority_internal`.
std::vector<std::pair<std::string, double>> tres_weights_in_slurm_order(const TresWeights& weights) {
  static constexpr std::array<std::string_view, 5> kFixed = {"cpu", "mem", "energy", "node", "billing"};
  std::vector<std::pair<std::string, double>> out;
  for (const auto name : kFixed) {
    if (const auto it = weights.find(std::string(name)); it != weights.end()) out.emplace_back(*it);
  }
  for (const auto& w : weights) {
    if (std::find(kFixed.begin(), kFixed.end(), w.first) == kFixed.end()) out.emplace_back(w);
  }
  return out;
}

}  // namespace

PriorityFlags PriorityFlags::parse(const std::set<std::string>& names) {
  PriorityFlags f;
  bool no_fair_tree = false;
  for (const auto& raw : names) {
    const std::string n = upper(raw);
    if (n == "NO_FAIR_TREE") no_fair_tree = true;
    if (n == "DEPTH_OBLIVIOUS") f.depth_oblivious = true;
    if (n == "ACCRUE_ALWAYS") f.accrue_always = true;
    if (n == "SMALL_RELATIVE_TO_TIME") f.small_relative_to_time = true;
    if (n == "CALCULATE_RUNNING") f.calculate_running = true;
    if (n == "INCR_ONLY") f.incr_only = true;
    if (n == "MAX_TRES") f.max_tres = true;
    if (n == "MAX_TRES_GRES") f.max_tres_gres = true;
    if (n == "NO_NORMAL_ASSOC" || n == "NO_NORMAL_ALL") f.no_normal_assoc = true;
    if (n == "NO_NORMAL_PART" || n == "NO_NORMAL_ALL") f.no_normal_part = true;
    if (n == "NO_NORMAL_QOS" || n == "NO_NORMAL_ALL") f.no_normal_qos = true;
    if (n == "NO_NORMAL_TRES" || n == "NO_NORMAL_ALL") f.no_normal_tres = true;
  }
  f.fair_tree = !no_fair_tree && !f.depth_oblivious;
  return f;
}

PriorityModel::PriorityModel(const Site& site) : PriorityModel(site, site.scheduler) {}

PriorityModel::PriorityModel(const Site& site, const SchedulerSettings& settings)
    : settings_(settings), flags_(PriorityFlags::parse(settings.priority_flags)) {
  cluster_nodes_ = static_cast<std::uint32_t>(site.nodes.size());
  for (const auto& n : site.nodes) cluster_cpus_ += n.cpus;
  for (const auto& p : site.partitions) {
    part_factor_.push_back(p.priority_job_factor);
    part_max_time_.push_back(p.max_time);
    max_part_factor_ = std::max<std::uint32_t>(max_part_factor_, p.priority_job_factor);
    TresMap totals{{"cpu", 0}, {"mem", 0}, {"node", 0}};
    for (const auto& name : p.nodes) {
      const Node* n = site.find_node(name);
      if (n == nullptr) continue;  // validate() reports these
      totals["cpu"] += n->cpus;
      totals["mem"] += n->real_memory_mb;
      totals["node"] += 1;
      for (const auto& g : n->gres) {
        totals["gres/" + g.name] += g.count;
        if (!g.type.empty()) totals["gres/" + g.name + ":" + g.type] += g.count;
      }
    }
    partition_tres_.push_back(std::move(totals));
  }
  for (const auto& q : site.qos) {
    qos_priority_.push_back(q.priority);
    max_qos_priority_ = std::max(max_qos_priority_, q.priority);
  }
  max_assoc_priority_ = AssocTree(site).max_priority();
}

double PriorityModel::job_size_factor(const PriorityInput& in) const {
  const double nodes = static_cast<double>(cluster_nodes_);
  const double cpus = static_cast<double>(cluster_cpus_);
  const double n = static_cast<double>(in.min_nodes);
  const double cpu_cnt = static_cast<double>(in.cpu_count);
  double f = 0.0;
  if (flags_.small_relative_to_time) {
    const double size = std::max(n * cpus / nodes, cpu_cnt);  // in CPUs
    Seconds limit = in.time_limit;
    if (limit == kUnsetTime || limit == kUnlimited) limit = part_max_time_.at(in.partition);
    f = size / limit_minutes(limit) / cpus;
    if (settings_.favor_small) f = 1.0 - f;
  } else if (settings_.favor_small) {
    f = in.min_nodes < cluster_nodes_ ? (nodes - n) / nodes : 0.0;
    if (in.cpu_count != 0) f = (f + (cpus - cpu_cnt) / cpus) / 2.0;
  } else {
    f = n / nodes;
    if (in.cpu_count != 0) f = (f + cpu_cnt / cpus) / 2.0;
  }
  return std::clamp(f, 0.0, 1.0);
}

StaticPriorityTerms PriorityModel::static_terms(const PriorityFactors& f, const PriorityInput& in) {
  return {f.weighted_assoc, f.weighted_job_size, f.weighted_partition,
          f.weighted_qos,   f.weighted_tres_sum, in.site_factor,
          in.nice};
}

PriorityFactors PriorityModel::compute(const PriorityInput& in) const {
  PriorityFactors out;
  const auto& s = settings_;
  out.age = age_factor(in.now, in.accrue_time);
  if (s.weight_assoc != 0) {
    if (flags_.no_normal_assoc) {
      out.assoc = static_cast<double>(in.assoc_priority);
    } else if (max_assoc_priority_ != 0) {
      out.assoc = static_cast<double>(in.assoc_priority) / static_cast<double>(max_assoc_priority_);
    }
  }
  if (s.weight_fairshare != 0) out.fairshare = in.fs_factor;
  out.job_size = job_size(in);
  const std::uint32_t part_factor = part_factor_.at(in.partition);
  if (s.weight_partition != 0 && part_factor != 0) {
    out.partition = flags_.no_normal_part ? static_cast<double>(part_factor)
                                          : static_cast<double>(part_factor) / max_part_factor_;
  }
  if (s.weight_qos != 0 && in.qos >= 0) {
    const std::uint32_t qp = qos_priority_.at(static_cast<std::size_t>(in.qos));
    if (qp != 0) {
      out.qos = flags_.no_normal_qos ? static_cast<double>(qp)
                                     : static_cast<double>(qp) / static_cast<double>(max_qos_priority_);
    }
  }
  const TresMap& totals = partition_tres_.at(in.partition);
  for (const auto& [name, weight] : tres_weights_in_slurm_order(s.weight_tres)) {
    const auto it = in.tres.find(name);
    const double v = it == in.tres.end() ? 0.0 : static_cast<double>(it->second);
    double f = 0.0;
    if (v != 0.0) {
      if (flags_.no_normal_tres) {
        f = v;
      } else if (const auto t = totals.find(name); t != totals.end() && t->second != 0) {
        f = v / static_cast<double>(t->second);
      }
    }
    out.tres[name] = f;
    out.weighted_tres[name] = f * weight;
    out.weighted_tres_sum += f * weight;
  }

  out.weighted_age = out.age * s.weight_age;
  out.weighted_assoc = out.assoc * s.weight_assoc;
  out.weighted_fairshare = out.fairshare * s.weight_fairshare;
  out.weighted_job_size = out.job_size * s.weight_job_size;
  out.weighted_partition = out.partition * s.weight_partition;
  out.weighted_qos = out.qos * s.weight_qos;
  out.sum =
      sum_terms(out.weighted_age, out.weighted_assoc, out.weighted_fairshare, out.weighted_job_size,
                out.weighted_partition, out.weighted_qos, out.weighted_tres_sum, in.site_factor, in.nice);
  out.priority = clamp_priority(out.sum);
  return out;
}

}  // namespace slurmtwin::policies
