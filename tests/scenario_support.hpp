#pragma once
// Hand-made clusters and traces for golden scenario tests (scheduler, backfill), and the ub_medium week.
#include <fmt/format.h>

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "test_support.hpp"
#include "traces/hostlist.hpp"
#include "traces/site.hpp"
#include "traces/site_import.hpp"
#include "traces/trace.hpp"
#include "traces/trace_io.hpp"

namespace slurmtwin::testing {

/// Origin of every scenario (first submit = controller start); a multiple of 60 so bf_resolution and
/// the will-run windows align with offsets.
inline constexpr Seconds kT0 = 1'700'000'040;

/// `nodes` nodes with `cpus` CPUs (`threads_per_core` threads per core) and 1000 MB each, one partition
/// "p" over all of them with DefMemPerCPU=100; QOS normal; users alice and bob in account acct; all
/// priority weights 0 (every priority is 1: FIFO by submit time, then job id); limits enforced
/// (AccountingStorageEnforce=associations,limits,qos, as most sites and the oracle's run).
inline Site small_site(std::uint32_t nodes, std::uint32_t cpus, std::uint32_t threads_per_core = 1) {
  Site s;
  s.cluster_name = "test";
  s.scheduler.accounting_storage_enforce = {"associations", "limits", "qos"};
  for (const auto& name : expand_hostlist(fmt::format("n[1-{}]", nodes))) {
    Node n;
    n.name = name;
    n.cpus = cpus;
    n.threads_per_core = threads_per_core;
    n.cores_per_socket = cpus / threads_per_core;
    n.real_memory_mb = 1000;
    s.nodes.push_back(n);
  }
  Partition p;
  p.name = std::string(1, 'p');
  p.is_default = true;
  for (const auto& n : s.nodes) p.nodes.push_back(n.name);
  p.def_mem_per_cpu_mb = 100;
  s.partitions.push_back(p);
  Qos normal;
  normal.name = "normal";
  s.qos.push_back(normal);
  s.accounts.push_back({"root", "", {1, false}, 0, {}, "", {}});
  s.accounts.push_back({"acct", "root", {1, false}, 0, {}, "", {}});
  for (const char* u : {"alice", "bob"}) {
    s.users.push_back({u, "acct", "None"});
    s.associations.push_back({u, "acct", "", {1, false}, 0, {}, "", {}});
  }
  return s;
}

struct JobSpec {
  Seconds submit = 0;       // offset from kT0
  std::uint32_t nodes = 1;  // requested nodes
  std::uint32_t cpus = 1;   // total tasks (1 CPU each)
  Seconds runtime = 100;
  Seconds limit = 3600;
  std::int64_t mem_mb = -1;  // -1 = not requested
  const char* user = "alice";
};

/// small_site with the oracle scenarios' timers: PriorityCalcPeriod 60 s (decay runs at kT0 + 60 k),
/// a main pass and a backfill cycle every second, bf_resolution 1 s.
inline Site every_second_site(std::uint32_t nodes, std::uint32_t cpus) {
  auto site = small_site(nodes, cpus);
  site.scheduler.calc_period = 60;
  site.scheduler.params.sched_interval = 1;
  site.scheduler.params.bf_interval = 1;
  site.scheduler.params.bf_resolution = 1;
  return site;
}

/// Jobs 1..N in partition "p", account acct.
inline Trace make_trace(const std::vector<JobSpec>& specs) {
  Trace t;
  for (std::size_t i = 0; i < specs.size(); ++i) {
    const auto& s = specs[i];
    JobRecord j;
    j.job_id = i + 1;
    j.user = t.users.intern(s.user);
    j.account = t.accounts.intern("acct");
    j.partition = t.partitions.intern("p");
    j.submit = j.eligible = kT0 + s.submit;
    j.nodes = s.nodes;
    j.tasks = s.cpus;
    j.req_cpus = s.cpus;
    j.runtime = s.runtime;
    j.time_limit = s.limit;
    j.mem_mb = s.mem_mb;
    t.jobs.push_back(j);
  }
  return t;
}

/// The ub_medium site (slurm.conf, sacctmgr.script) and its week of 19,579 events jobs, users' default
/// accounts from the script; nullopt, after saying why, when ../shared/data lacks them.
inline std::optional<std::pair<Site, Trace>> ub_medium_week() {
  const auto conf = data_file("ub_medium/slurm.conf");
  const auto script = data_file("ub_medium/sacctmgr.script");
  const auto events = data_file("ub_medium/workload_week.events");
  if (conf.empty() || script.empty() || events.empty()) return std::nullopt;
  std::vector<std::string> warnings;
  Site site = import_site(SiteFiles::conf_and_script(conf, script), warnings);
  TraceReadOptions options;
  for (const auto& u : site.users) options.user_default_accounts[u.name] = u.default_account;
  ReadReport report;
  auto trace = read_trace({events}, options, report);
  return std::pair{std::move(site), std::move(trace)};
}

}  // namespace slurmtwin::testing
