#include "traces/synthetic.hpp"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>

#include "traces/read_report.hpp"
#include "traces/rng.hpp"
#include "traces/time_format.hpp"

namespace slurmtwin {
namespace {

constexpr Seconds kLimitQuantum = 15 * 60;  // users round time limits up to quarter hours

// Cumulative weights for sampling an index.
class Categorical {
 public:
  explicit Categorical(const std::vector<double>& weights) {
    double sum = 0;
    for (double w : weights) {
      if (!(w >= 0)) throw std::invalid_argument("synthetic workload: negative weight");
      sum += w;
      cum_.push_back(sum);
    }
    if (cum_.empty() || sum <= 0) throw std::invalid_argument("synthetic workload: weights sum to zero");
  }
  std::size_t sample(Rng& rng) const {
    const double u = rng.uniform() * cum_.back();
    return std::min<std::size_t>(std::upper_bound(cum_.begin(), cum_.end(), u) - cum_.begin(),
                                 cum_.size() - 1);
  }

 private:
  std::vector<double> cum_;
};

std::vector<double> default_diurnal() {
  // Low at night, peak mid-morning and early afternoon (mean 1 over 24 h).
  std::vector<double> d = {0.35, 0.3, 0.25, 0.25, 0.3, 0.4, 0.6, 0.9, 1.3, 1.7, 1.8, 1.6,
                           1.4,  1.6, 1.7,  1.6,  1.4, 1.2, 1.0, 0.9, 0.8, 0.7, 0.6, 0.45};
  const double mean = std::accumulate(d.begin(), d.end(), 0.0) / 24.0;
  for (auto& x : d) x /= mean;
  return d;
}

std::vector<double> default_weekly() {
  return {1.2, 1.2, 1.15, 1.1, 1.0, 0.7, 0.65};
}

double modulation(const SyntheticConfig& c, Seconds t) {
  const auto since_monday = (t - 345600) % (7 * 86400);  // epoch day 4 (1970-01-05) was a Monday
  const auto day = static_cast<std::size_t>(since_monday / 86400);
  const auto hour = static_cast<std::size_t>(since_monday % 86400 / 3600);
  return c.diurnal[hour] * c.weekly[day];
}

}  // namespace

SyntheticConfig default_synthetic_config() {
  SyntheticConfig c;
  c.accounts = {{"phys-theory", 3}, {"phys-exp", 2}, {"chem", 2.5},
                {"bio", 1.5},       {"cs-ml", 2},    {"cs-sys", 1}};
  c.partitions = {
      {"cpu", 0.72, 32, 16, 3 * 86400, 0, "", 0, {}},
      {"gpu", 0.18, 32, 2, 2 * 86400, 4, "a100", 0, {}},
      {"debug", 0.10, 32, 2, 3600, 0, "", 2000, {{"debug", 1.0}}},
  };
  c.qos = {{"normal", 0.8}, {"high", 0.1}, {"low", 0.1}};
  return c;
}

SyntheticConfig load_synthetic_config(const std::string& path) {
  SyntheticConfig c = default_synthetic_config();
  YAML::Node root;
  try {
    root = YAML::LoadFile(path);
  } catch (const YAML::BadFile&) {
    throw InputError(path, 0, "", "cannot open synthetic workload config");
  } catch (const YAML::Exception& e) {
    throw InputError(path, static_cast<std::uint64_t>(e.mark.line + 1), "", e.msg);
  }
  if (!root.IsMap()) throw InputError(path, 0, "", "synthetic workload config must be a YAML mapping");
  const auto fail = [&](const YAML::Node& n, const std::string& key, const std::string& what) {
    throw InputError(path, static_cast<std::uint64_t>(n.Mark().line + 1), key, what);
  };
  try {
    for (const auto& kv : root) {
      const auto key = kv.first.as<std::string>();
      const auto& v = kv.second;
      if (key == "seed")
        c.seed = v.as<std::uint64_t>();
      else if (key == "start") {
        const auto t = parse_timestamp(v.as<std::string>());
        if (!t || *t == kUnsetTime) fail(v, key, "expected YYYY-MM-DDTHH:MM:SS");
        c.start = *t;
      } else if (key == "days")
        c.days = v.as<double>();
      else if (key == "jobs_per_day")
        c.jobs_per_day = v.as<double>();
      else if (key == "diurnal")
        c.diurnal = v.as<std::vector<double>>();
      else if (key == "weekly")
        c.weekly = v.as<std::vector<double>>();
      else if (key == "users")
        c.users = v.as<std::uint32_t>();
      else if (key == "user_zipf")
        c.user_zipf = v.as<double>();
      else if (key == "serial_fraction")
        c.serial_fraction = v.as<double>();
      else if (key == "multinode_fraction")
        c.multinode_fraction = v.as<double>();
      else if (key == "runtime_median_s")
        c.runtime_median_s = v.as<double>();
      else if (key == "runtime_sigma")
        c.runtime_sigma = v.as<double>();
      else if (key == "overestimate_max")
        c.overestimate_max = v.as<double>();
      else if (key == "exact_limit_fraction")
        c.exact_limit_fraction = v.as<double>();
      else if (key == "accounts") {
        c.accounts.clear();
        for (const auto& a : v)
          c.accounts.push_back({a["name"].as<std::string>(), a["weight"].as<double>(1.0)});
      } else if (key == "qos") {
        c.qos.clear();
        for (const auto& q : v) c.qos.push_back({q["name"].as<std::string>(), q["weight"].as<double>(1.0)});
      } else if (key == "partitions") {
        c.partitions.clear();
        for (const auto& p : v) {
          SyntheticPartition sp;
          sp.name = p["name"].as<std::string>();
          sp.weight = p["weight"].as<double>(1.0);
          sp.cores_per_node = p["cores_per_node"].as<std::uint32_t>(32);
          sp.max_nodes = p["max_nodes"].as<std::uint32_t>(8);
          if (p["max_time"]) {
            const auto t = parse_slurm_duration(p["max_time"].as<std::string>());
            if (!t || *t == kUnsetTime) fail(p["max_time"], "max_time", "expected a Slurm duration");
            sp.max_time = *t;
          }
          sp.gpus_per_node = p["gpus_per_node"].as<std::uint32_t>(0);
          sp.gpu_type = p["gpu_type"].as<std::string>("");
          sp.mem_per_cpu_mb = p["mem_per_cpu_mb"].as<std::int64_t>(0);
          for (const auto& q : p["qos"])
            sp.qos.push_back({q["name"].as<std::string>(), q["weight"].as<double>(1.0)});
          c.partitions.push_back(sp);
        }
      } else {
        fail(kv.first, key, "unknown key");
      }
    }
  } catch (const YAML::Exception& e) {
    throw InputError(path, static_cast<std::uint64_t>(e.mark.line + 1), "", "bad value: " + e.msg);
  }
  return c;
}

Trace generate_synthetic(const SyntheticConfig& config) {
  SyntheticConfig c = config;
  if (c.diurnal.empty()) c.diurnal = default_diurnal();
  if (c.weekly.empty()) c.weekly = default_weekly();
  if (c.diurnal.size() != 24) throw std::invalid_argument("synthetic workload: diurnal needs 24 values");
  if (c.weekly.size() != 7) throw std::invalid_argument("synthetic workload: weekly needs 7 values");
  if (c.users == 0 || c.accounts.empty() || c.partitions.empty() || c.qos.empty())
    throw std::invalid_argument("synthetic workload: needs users, accounts, partitions and qos");
  if (!(c.days > 0) || !(c.jobs_per_day > 0))
    throw std::invalid_argument("synthetic workload: days and jobs_per_day must be > 0");
  if (c.days * c.jobs_per_day > 1e8)
    throw std::invalid_argument("synthetic workload: more than 10^8 jobs requested");

  Rng rng(c.seed);
  Trace t;
  t.origin = c.start;
  t.source = fmt::format("synthetic(seed={})", c.seed);

  // Users: user k belongs to an account drawn by account weight; activity ~ Zipf.
  std::vector<double> acct_w;
  for (const auto& a : c.accounts) acct_w.push_back(a.weight);
  const Categorical pick_account(acct_w);
  std::vector<double> user_w;
  std::vector<NameIndex> user_account;
  for (std::uint32_t k = 0; k < c.users; ++k) {
    t.users.intern(fmt::format("user{:03}", k + 1));
    user_account.push_back(t.accounts.intern(c.accounts[pick_account.sample(rng)].name));
    user_w.push_back(1.0 / std::pow(static_cast<double>(k + 1), c.user_zipf));
  }
  const Categorical pick_user(user_w);
  std::vector<double> part_w;
  for (const auto& p : c.partitions) part_w.push_back(p.weight);
  const Categorical pick_part(part_w);
  std::vector<NameIndex> part_index;
  // Per partition: its QOS mix (or the global one) and the QOS name indices.
  std::vector<Categorical> pick_qos;
  std::vector<std::vector<NameIndex>> qos_index;
  for (const auto& p : c.partitions) {
    part_index.push_back(t.partitions.intern(p.name));
    const auto& mix = p.qos.empty() ? c.qos : p.qos;
    std::vector<double> w;
    qos_index.emplace_back();
    for (const auto& q : mix) {
      w.push_back(q.weight);
      qos_index.back().push_back(t.qos.intern(q.name));
    }
    pick_qos.emplace_back(w);
  }
  const NameIndex job_name = t.strings.intern("synthetic");

  // Non-homogeneous Poisson arrivals by thinning against the peak rate.
  const double peak = *std::max_element(c.diurnal.begin(), c.diurnal.end()) *
                      *std::max_element(c.weekly.begin(), c.weekly.end());
  const double peak_rate = c.jobs_per_day * peak / 86400.0;  // per second
  const double end = static_cast<double>(c.start) + c.days * 86400.0;
  double now = static_cast<double>(c.start);
  std::uint64_t id = 0;
  while (true) {
    now += rng.exponential(peak_rate);
    if (now >= end) break;
    const auto submit = static_cast<Seconds>(now);
    if (rng.uniform() * peak > modulation(c, submit)) continue;

    JobRecord j;
    j.job_id = ++id;
    const auto u = pick_user.sample(rng);
    j.user = static_cast<NameIndex>(u);
    j.account = user_account[u];
    const auto pi = pick_part.sample(rng);
    const auto& p = c.partitions[pi];
    j.partition = part_index[pi];
    j.qos = qos_index[pi][pick_qos[pi].sample(rng)];
    j.name = job_name;
    j.submit = j.eligible = submit;
    j.state = JobState::kCompleted;

    // Size: serial, sub-node (power of two cores) or whole nodes.
    const double s = rng.uniform();
    if (p.gpus_per_node > 0) {
      const auto gpus = static_cast<std::uint32_t>(1 + rng.below(p.gpus_per_node));
      j.nodes = s < c.multinode_fraction && p.max_nodes > 1
                    ? 2 + static_cast<std::uint32_t>(rng.below(p.max_nodes - 1))
                    : 1;
      j.tasks = j.nodes * gpus;
      j.tasks_per_node = gpus;
      j.cpus_per_task = std::max<std::uint32_t>(1, p.cores_per_node / p.gpus_per_node);
      j.gres.push_back({"gpu", p.gpu_type, gpus, true});
    } else if (s < c.serial_fraction) {
      j.nodes = 1;
      j.tasks = 1;
    } else if (s < 1.0 - c.multinode_fraction || p.max_nodes < 2) {
      j.nodes = 1;
      const auto max_pow =
          static_cast<std::uint32_t>(std::log2(std::max<std::uint32_t>(p.cores_per_node, 2)));
      j.tasks = 1u << (1 + rng.below(max_pow));
    } else {
      const double lg =
          std::log(2.0) + rng.uniform() * (std::log(static_cast<double>(p.max_nodes) + 1) - std::log(2.0));
      j.nodes = std::clamp<std::uint32_t>(static_cast<std::uint32_t>(std::exp(lg)), 2, p.max_nodes);
      j.tasks = j.nodes * p.cores_per_node;
      j.tasks_per_node = p.cores_per_node;
    }
    j.req_cpus = j.tasks * j.cpus_per_task;
    if (p.mem_per_cpu_mb > 0) {
      j.mem_mb = p.mem_per_cpu_mb;
      j.mem_per_cpu = true;
    }

    // Runtime: lognormal, capped by the partition limit; limit: over-estimated, quarter-hour rounded.
    const auto runtime = std::clamp<Seconds>(
        static_cast<Seconds>(rng.lognormal(std::log(c.runtime_median_s), c.runtime_sigma)), 1, p.max_time);
    const double over = 1.0 + rng.uniform() * (c.overestimate_max - 1.0);
    Seconds limit =
        static_cast<Seconds>(std::ceil(static_cast<double>(runtime) * over / kLimitQuantum)) * kLimitQuantum;
    limit = std::clamp<Seconds>(limit, kLimitQuantum, p.max_time);
    j.time_limit = limit;
    j.runtime = rng.uniform() < c.exact_limit_fraction ? limit : std::min(runtime, limit);
    t.jobs.push_back(std::move(j));
  }
  return t;
}

}  // namespace slurmtwin
