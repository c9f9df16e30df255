#pragma once
// Synthetic workloads: diurnal and weekly arrivals, users with skewed activity, size mixes, heavy-tailed
// runtimes with user over-estimated time limits, GPU jobs. Deterministic per seed on every platform.
#include <string>
#include <vector>

#include "traces/trace.hpp"

namespace slurmtwin {

struct SyntheticQos {
  std::string name;
  double weight = 1.0;
};

struct SyntheticPartition {
  std::string name;
  double weight = 1.0;                // share of jobs
  std::uint32_t cores_per_node = 32;  // CPUs a node offers (sizes are drawn against this)
  std::uint32_t max_nodes = 8;        // largest multi-node job
  Seconds max_time = 3 * 86400;       // limits are capped here, s
  std::uint32_t gpus_per_node = 0;    // >0: every job asks 1..gpus_per_node GPUs per node
  std::string gpu_type;               // "" = untyped request
  std::int64_t mem_per_cpu_mb = 0;    // >0: jobs request --mem-per-cpu this much (else no --mem)
  std::vector<SyntheticQos> qos;      // QOS mix of this partition's jobs; empty = the global mix
};

struct SyntheticAccount {
  std::string name;
  double weight = 1.0;  // relative activity of the account's users
};

/// Everything the generator draws from. Defaults describe the built-in default site's workload.
struct SyntheticConfig {
  std::uint64_t seed = 42;
  Seconds start = 1767571200;  // 2026-01-05T00:00:00Z, a Monday
  double days = 7.0;
  double jobs_per_day = 550.0;  // mean arrivals per day before the diurnal/weekly modulation
  std::vector<double> diurnal;  // 24 hourly multipliers (mean 1); empty = office-hours default
  std::vector<double> weekly;   // 7 daily multipliers Monday..Sunday; empty = weekday-heavy default
  std::uint32_t users = 24;
  double user_zipf = 1.1;  // user activity ~ 1/rank^zipf
  std::vector<SyntheticAccount> accounts;
  std::vector<SyntheticPartition> partitions;
  std::vector<SyntheticQos> qos;
  double serial_fraction = 0.35;      // 1-core jobs
  double multinode_fraction = 0.15;   // jobs spanning whole nodes (2..max_nodes, log-uniform)
  double runtime_median_s = 1800;     // lognormal runtime median
  double runtime_sigma = 1.7;         // lognormal shape (heavy tail)
  double overestimate_max = 6.0;      // limit = runtime * U(1, max), rounded up to 15 min, capped
  double exact_limit_fraction = 0.1;  // jobs that hit their limit (runtime = limit: TIMEOUT-ish)
};

/// The built-in default workload (matches default_site()).
SyntheticConfig default_synthetic_config();
/// Loads a YAML config; keys as the struct's fields; missing keys keep defaults. Throws InputError.
SyntheticConfig load_synthetic_config(const std::string& path);
/// Generates the trace: jobs in submit order with ids 1..N, state COMPLETED, no recorded start.
Trace generate_synthetic(const SyntheticConfig& config);

}  // namespace slurmtwin
