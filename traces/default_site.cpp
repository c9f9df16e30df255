#include "traces/default_site.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

#include "traces/hostlist.hpp"
#include "traces/node_order.hpp"

namespace slurmtwin {
namespace {

void add_nodes(Site& site, const std::string& hostlist, std::uint32_t cores_per_socket, std::int64_t mem_mb,
               std::uint32_t weight, const std::vector<NodeGres>& gres,
               const std::vector<std::string>& features) {
  for (auto& name : expand_hostlist(hostlist)) {
    Node n;
    n.name = std::move(name);
    n.sockets = 2;
    n.cores_per_socket = cores_per_socket;
    n.cpus = 2 * cores_per_socket;
    n.real_memory_mb = mem_mb;
    n.weight = weight;
    n.gres = gres;
    n.features = features;
    n.state = "IDLE";
    site.nodes.push_back(std::move(n));
  }
}

}  // namespace

Site default_site() {
  return scaled_default_site(64);
}

Site scaled_default_site(std::uint32_t cpu_nodes) {
  if (cpu_nodes == 0 || cpu_nodes > kMaxDefaultCpuNodes)
    throw std::out_of_range(
        fmt::format("the default site has 1..{} CPU nodes, not {}", kMaxDefaultCpuNodes, cpu_nodes));
  Site s;
  s.cluster_name = cpu_nodes == 64 ? "twin" : fmt::format("twin{}", cpu_nodes);
  const auto big = std::max<std::uint32_t>(1, cpu_nodes / 16),
             gpus = std::max<std::uint32_t>(1, cpu_nodes / 8);
  const auto c_list = fmt::format("c[{:04}-{:04}]", 1, cpu_nodes),
             b_list = fmt::format("bm[{:03}-{:03}]", 1, big);
  add_nodes(s, c_list, 16, 192000, 10, {}, {"cpu", "ib"});
  add_nodes(s, b_list, 16, 768000, 50, {}, {"cpu", "ib", "bigmem"});
  add_nodes(s, fmt::format("g[{:03}-{:03}]", 1, gpus), 16, 384000, 100, {{"gpu", "a100", 4}},
            {"gpu", "a100"});

  Partition cpu;
  cpu.name = "cpu";
  cpu.nodes = expand_hostlist(c_list + "," + b_list);
  cpu.is_default = true;
  cpu.max_time = 3 * 86400;
  cpu.default_time = 3600;
  cpu.def_mem_per_cpu_mb = 4000;
  cpu.allow_qos = {"normal", "high", "low"};
  Partition gpu;
  gpu.name = "gpu";
  gpu.nodes = expand_hostlist(fmt::format("g[{:03}-{:03}]", 1, gpus));
  gpu.max_time = 2 * 86400;
  gpu.default_time = 3600;
  gpu.def_mem_per_cpu_mb = 8000;
  gpu.allow_qos = {"normal", "high", "low"};
  gpu.tres_billing_weights = {{"cpu", 1.0}, {"gres/gpu", 8.0}};
  Partition debug;
  debug.name = "debug";
  debug.nodes = expand_hostlist(
      fmt::format("c[{:04}-{:04}]", 1, std::min(cpu_nodes, std::max<std::uint32_t>(4, cpu_nodes / 16))));
  debug.max_time = 3600;
  debug.default_time = 1800;
  debug.def_mem_per_cpu_mb = 2000;
  debug.priority_job_factor = 10;
  debug.priority_tier = 2;  // debug jobs are considered before the other partitions' jobs
  debug.allow_qos = {"normal", "debug"};
  s.partitions = {cpu, gpu, debug};

  Qos normal;
  normal.name = "normal";
  Qos high;
  high.name = "high";
  high.priority = 100;
  high.usage_factor = 2.0;
  high.preempt = {"low"};
  high.limits.max_jobs_per_user = 20;
  Qos low;
  low.name = "low";
  low.usage_factor = 0.5;
  low.preempt_mode = PreemptMode::kRequeue;
  Qos dbg;
  dbg.name = "debug";
  dbg.priority = 50;
  dbg.limits.max_jobs_per_user = 2;
  dbg.limits.max_wall = 3600;
  s.qos = {normal, high, low, dbg};

  // root -> physics (40) -> {phys-theory 60, phys-exp 40}; chemistry (30) -> chem; life (20) -> bio;
  // cs (10) -> {cs-ml 70, cs-sys 30}
  s.accounts = {{"root", "", {1, false}, 0, {"normal", "high", "low", "debug"}, "normal", {}},
                {"physics", "root", {40, false}, 0, {}, "", {}},
                {"chemistry", "root", {30, false}, 0, {}, "", {}},
                {"life", "root", {20, false}, 0, {}, "", {}},
                {"cs", "root", {10, false}, 0, {}, "", {}},
                {"phys-theory", "physics", {60, false}, 0, {}, "", {}},
                {"phys-exp", "physics", {40, false}, 0, {}, "", {}},
                {"chem", "chemistry", {1, false}, 0, {}, "", {}},
                {"bio", "life", {1, false}, 0, {}, "", {}},
                {"cs-ml", "cs", {70, false}, 0, {}, "", {}},
                {"cs-sys", "cs", {30, false}, 0, {}, "", {}}};
  s.users.push_back({"root", "root", "Administrator"});
  s.associations.push_back({"root", "root", "", {1, false}, 0, {}, "", {}});

  auto& p = s.scheduler;
  p.weight_age = 1000;
  p.weight_fairshare = 10000;
  p.weight_job_size = 500;
  p.weight_partition = 1000;
  p.weight_qos = 2000;
  p.weight_tres = {{"gres/gpu", 100.0}};
  p.preempt_type = "preempt/qos";
  p.preempt_mode = PreemptMode::kRequeue;
  p.preempt_exempt_time = 600;
  p.accounting_storage_enforce = {"associations", "limits", "qos"};
  p.accounting_storage_tres = {"gres/gpu"};
  p.params.bf_continue = true;
  order_nodes_as_slurmctld(s);
  return s;
}

}  // namespace slurmtwin
