#include "sim/job_resolver.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <limits>
#include <map>
#include <stdexcept>
#include <unordered_map>

#include "traces/text.hpp"

namespace slurmtwin::sim {
namespace {

/// The (user, account) part of a SiteIndex association key; the partition name follows it.
std::string assoc_key(std::string_view user, std::string_view account) {
  std::string key;
  key.reserve(user.size() + account.size() + 2);
  key.append(user).append(1, '\x1f').append(account).append(1, '\x1f');
  return key;
}

struct SiteIndex {
  std::unordered_map<std::string, std::uint16_t> partitions, qos;
  // "user\x1faccount\x1fpartition" -> index; partition "" = the association for every other partition.
  // One string built and one hash lookup per job (a year has a million): a map keyed by tuples of
  // strings made the year replay 35% slower.
  std::unordered_map<std::string, std::int32_t> assoc;
  bool partition_assocs = false;  // any association of one partition (else one lookup per job)
  std::unordered_map<std::string, std::string> default_account;

  explicit SiteIndex(const Site& s) {
    for (std::size_t i = 0; i < s.partitions.size(); ++i)
      partitions[s.partitions[i].name] = static_cast<std::uint16_t>(i);
    for (std::size_t i = 0; i < s.qos.size(); ++i) qos[s.qos[i].name] = static_cast<std::uint16_t>(i);
    for (std::size_t i = 0; i < s.associations.size(); ++i) {
      const auto& a = s.associations[i];
      assoc.emplace(assoc_key(a.user, a.account) + a.partition, static_cast<std::int32_t>(i));
      partition_assocs |= !a.partition.empty();
    }
    for (const auto& u : s.users) default_account[u.name] = u.default_account;
  }
};

// A job's -L against the site: its licences, or why slurmctld refuses it at submit ("" if it does not).
std::string resolve_licenses(const Site& site, const std::string& spec, std::vector<LicenseUse>& out) {
  std::vector<LicenseCount> asked;
  try {
    asked = parse_licenses(spec);
  } catch (const std::invalid_argument&) {
    return "invalid licence specification";
  }
  for (const auto& a : asked) {
    const auto* lic = site.find_license(a.name);
    if (lic == nullptr) return "unknown licence (not in the site's Licenses=)";
    if (a.count > lic->count && !site.scheduler.params.allow_zero_lic)
      return "more licences than the site has (Licenses=)";
    if (a.count > 0) out.push_back({static_cast<std::uint32_t>(lic - site.licenses.data()), a.count});
  }
  return {};
}

// The QOS a job gets when it names none: the association's default, then its accounts' upwards,
// then "normal" when the site has it, else the first QOS.
std::string default_qos(const Site& site, const UserAssoc& a) {
  if (!a.default_qos.empty()) return a.default_qos;
  for (const Account* acc = site.find_account(a.account); acc; acc = site.find_account(acc->parent)) {
    if (!acc->default_qos.empty()) return acc->default_qos;
    if (acc->parent.empty()) break;
  }
  if (site.find_qos("normal")) return "normal";
  return site.qos.empty() ? "" : site.qos.front().name;
}

/// The nodes of each partition grouped by configuration (CPUs, threads, memory, GRES, features):
/// whether a request could ever run is then a question about a handful of classes, not every node.
class NodeClasses {
 public:
  NodeClasses(const Site& site, const ClusterState& cluster) {
    std::unordered_map<std::string, std::uint32_t> index;
    for (std::uint32_t n = 0; n < site.nodes.size(); ++n) index[site.nodes[n].name] = n;
    for (const auto& p : site.partitions) {
      std::vector<Class> classes;
      for (const auto& name : p.nodes) {
        const auto it = index.find(name);
        if (it == index.end()) continue;
        const auto n = it->second;
        const auto same = std::find_if(classes.begin(), classes.end(), [&](const Class& c) {
          const auto& a = site.nodes[c.node];
          const auto& b = site.nodes[n];
          return a.cpus == b.cpus && a.threads_per_core == b.threads_per_core &&
                 cluster.node(c.node).memory_mb == cluster.node(n).memory_mb &&
                 cluster.node(c.node).gres == cluster.node(n).gres && a.features == b.features;
        });
        if (same != classes.end())
          ++same->count;
        else
          classes.push_back({n, 1});
      }
      partitions_.push_back(std::move(classes));
    }
  }

  /// Whether partition `p` could run `r` on its nodes when they are all idle (Slurm refuses a job
  /// at submit otherwise: "Requested node configuration is not available").
  /// Whether `r` asks for more nodes or CPUs than partition `p` has.
  bool over_partition(const ClusterState& cluster, std::uint16_t p, const NodeRequest& r) const {
    std::uint64_t partition_nodes = 0, partition_cpus = 0;
    for (const auto& c : partitions_[p]) {
      partition_nodes += c.count;
      partition_cpus += static_cast<std::uint64_t>(c.count) * cluster.node(c.node).cpus;
    }
    return partition_nodes < r.min_nodes || partition_cpus < r.total_cpus;
  }

  /// A request for more nodes or CPUs than the partition has is not refused here: slurmctld checks
  /// the partition's limits first and the job pends (PartitionNodeLimit, PartitionConfig; seen on
  /// real Slurm 22.05: -n40 on 4 x 8 CPUs pends).
  bool could_run(const ClusterState& cluster, std::uint16_t p, const NodeRequest& r) const {
    if (over_partition(cluster, p, r)) return true;
    std::vector<std::pair<std::uint32_t, std::uint32_t>> usable;  // (CPUs on one node, nodes)
    for (const auto& c : partitions_[p]) {
      const auto& n = cluster.node(c.node);
      const auto cpus = cluster.usable_cpus(c.node, r, r.per_node_ask(),
                                            NodeFree{n.cpus, 0, n.memory_mb, false}, n.gres.data());
      if (cpus > 0) usable.emplace_back(cpus, c.count);
    }
    std::sort(usable.begin(), usable.end(), std::greater<>());
    const std::uint64_t bound = r.node_bound();
    std::uint64_t nodes = 0, cpus = 0;
    for (const auto& [each, count] : usable) {
      const auto take = std::min<std::uint64_t>(count, bound - nodes);
      nodes += take;
      cpus += take * each;
      if (nodes == bound) break;
    }
    return nodes >= r.min_nodes && cpus >= r.total_cpus;
  }

 private:
  struct Class {
    std::uint32_t node;   // one node of the class
    std::uint32_t count;  // nodes of the partition in it
  };
  std::vector<std::vector<Class>> partitions_;
};

}  // namespace

std::vector<SimJob> resolve_jobs(const Trace& trace, const Site& site, ClusterState& cluster,
                                 const ResolveOptions& options, std::vector<std::string>& users) {
  const SiteIndex idx(site);
  const NodeClasses classes(site, cluster);
  std::unordered_map<NameIndex, std::uint32_t> user_of;
  std::unordered_map<std::uint64_t, std::int32_t> array_slot_of;  // capped array job id -> SimJob::array_slot
  std::vector<SimJob> out;
  out.reserve(trace.jobs.size());
  for (std::uint32_t t = 0; t < trace.jobs.size(); ++t) {
    const auto& r = trace.jobs[t];
    SimJob j;
    j.trace_index = t;
    j.id = r.job_id;
    j.array_task = r.array_task;
    if (r.array_task >= 0 && r.array_max_running > 0) {
      j.array_cap = r.array_max_running;
      j.array_slot =
          array_slot_of.try_emplace(r.job_id, static_cast<std::int32_t>(array_slot_of.size())).first->second;
    }
    j.submit = r.submit;
    j.cancel = r.cancel;
    j.nice = r.nice;
    auto [uit, added] = user_of.try_emplace(r.user, static_cast<std::uint32_t>(users.size()));
    if (added) users.push_back(trace.user_name(r));
    j.user = uit->second;
    const auto reject = [&](std::string why) {
      j.state = SimJobState::kRejected;
      j.reject_reason = std::move(why);
      out.push_back(std::move(j));
    };
    if (r.submit == kUnsetTime) {
      reject("no submit time");
      continue;
    }

    // Association: (user, account), account defaulting to the user's default account.
    std::string account = trace.account_name(r);
    if (account.empty()) {
      auto d = idx.default_account.find(trace.user_name(r));
      if (d != idx.default_account.end()) account = d->second;
    }
    // Partitions: the requested list, else the default partition.
    const auto& plist = trace.partition_name(r);
    bool bad_partition = false;
    for (auto name : text::split(plist, ',')) {
      name = text::trim(name);
      if (name.empty()) continue;
      auto p = idx.partitions.find(std::string(name));
      if (p == idx.partitions.end()) {
        bad_partition = true;
        break;
      }
      j.partitions.push_back(p->second);
    }
    if (bad_partition) {
      reject("unknown partition");
      continue;
    }
    if (j.partitions.empty()) {
      const auto* dp = site.default_partition();
      if (!dp) {
        reject("no partition and no default partition");
        continue;
      }
      j.partitions.push_back(idx.partitions.at(dp->name));
    }

    // Association: the user's in that account for the (first) partition, else for any partition, as
    // slurmctld picks a partition's own association first (real Slurm 22.05 charges a job in partition
    // prio to user erin's prio association: docs/fidelity.md, scenario 17).
    auto key = assoc_key(trace.user_name(r), account);
    auto ait = idx.assoc.end();
    if (idx.partition_assocs) ait = idx.assoc.find(key + site.partitions[j.partitions.front()].name);
    if (ait == idx.assoc.end()) ait = idx.assoc.find(key);
    if (ait == idx.assoc.end()) {
      reject("no association for user/account");
      continue;
    }
    j.assoc = ait->second;
    const auto& assoc = site.associations[static_cast<std::size_t>(j.assoc)];

    // QOS: requested, else the association's default; must be allowed by every requested partition.
    const std::string qos_name = trace.qos_name(r).empty() ? default_qos(site, assoc) : trace.qos_name(r);
    auto q = idx.qos.find(qos_name);
    if (q == idx.qos.end()) {
      reject("unknown QOS");
      continue;
    }
    j.qos = q->second;
    const bool qos_allowed = std::all_of(j.partitions.begin(), j.partitions.end(), [&](std::uint16_t p) {
      const auto& allow = site.partitions[p].allow_qos;
      return allow.empty() || std::any_of(allow.begin(), allow.end(), [&](const std::string& a) {
               return a == qos_name || text::iequals(a, "ALL");
             });
    });
    if (!qos_allowed) {
      reject("QOS not allowed in partition");
      continue;
    }

    // Reservation: one the site has (sbatch refuses others: "Requested reservation is invalid").
    if (r.reservation != kNoName || r.reservation_id != 0) {
      const auto& name = trace.strings.name(r.reservation);
      const auto it =
          std::find_if(site.reservations.begin(), site.reservations.end(), [&](const Reservation& res) {
            return r.reservation != kNoName ? res.name == name : res.id == r.reservation_id;
          });
      if (it == site.reservations.end()) {
        reject(name.find(',') != std::string::npos ? "several reservations (not modelled)"
                                                   : "unknown reservation (give the site's reservations)");
        continue;
      }
      j.reservation = static_cast<std::int32_t>(it - site.reservations.begin());
    }

    // Licences: names the site has, and no more than it has unless allow_zero_lic (_job_create's
    // license_validate; sbatch: "Invalid license specification").
    if (r.licenses != kNoName) {
      if (const auto why = resolve_licenses(site, trace.strings.name(r.licenses), j.licenses); !why.empty()) {
        reject(why);
        continue;
      }
    }

    // Time limit: requested, else the first partition's DefaultTime, else its MaxTime.
    const auto& part = site.partitions[j.partitions.front()];
    j.time_limit = r.time_limit != kUnsetTime        ? r.time_limit
                   : part.default_time != kUnsetTime ? part.default_time
                                                     : part.max_time;
    if (j.time_limit <= 0) {
      reject("time limit is zero");
      continue;
    }
    if (site.scheduler.enforce_part_limits != "NO" && j.time_limit != kUnlimited &&
        part.max_time != kUnlimited && j.time_limit > part.max_time) {
      reject("time limit exceeds partition MaxTime");
      continue;
    }
    if (r.runtime != kUnsetTime)
      j.runtime = r.runtime;
    else if (r.start != kUnsetTime && r.end != kUnsetTime)
      j.runtime = r.end - r.start;
    else {
      reject("no runtime");
      continue;
    }
    if (j.runtime < 0) {
      reject("negative runtime");
      continue;
    }
    if (j.runtime == kUnlimited && j.time_limit == kUnlimited) {
      reject("runs forever (runs to its time limit, which is UNLIMITED)");
      continue;
    }

    // Resources per node.
    auto& req = j.request;
    req.cpus_per_task = std::max<std::uint32_t>(1, r.cpus_per_task);
    req.total_cpus = std::max<std::uint32_t>({1, r.req_cpus, r.tasks * req.cpus_per_task});
    req.min_nodes = std::max<std::uint32_t>(1, r.nodes);
    j.asked_nodes = req.min_nodes;
    req.max_nodes = r.nodes == 0 ? kUnboundedNodes : r.nodes;
    if (r.tasks_per_node > 0) {
      // --ntasks-per-node: that many tasks on each node, on as many nodes as the tasks need (Slurm's
      // _select_nodes raises the minimum node count to ceil(tasks / ntasks-per-node)).
      req.cpus_per_node = r.tasks_per_node * req.cpus_per_task;
      const std::uint32_t tasks = req.total_cpus / req.cpus_per_task;
      req.min_nodes = std::max(req.min_nodes, (tasks + r.tasks_per_node - 1) / r.tasks_per_node);
      req.max_nodes = std::max(req.max_nodes, req.min_nodes);
      req.total_cpus = std::max(req.total_cpus, req.min_nodes * req.cpus_per_node);
    }
    if (req.total_cpus < req.min_nodes * req.cpus_per_task)
      req.total_cpus = req.min_nodes * req.cpus_per_task;
    req.exclusive = r.exclusive;
    if (r.mem_mb < 0) {
      if (part.def_mem_per_cpu_mb > 0)
        req.mem_per_cpu_mb = part.def_mem_per_cpu_mb;
      else if (part.def_mem_per_node_mb > 0)
        req.mem_per_node_mb = part.def_mem_per_node_mb;
      else
        req.mem_per_node_mb = -1;  // no request, no default: the whole node's memory
    } else if (r.mem_mb == 0) {
      req.mem_per_node_mb = -1;  // --mem=0: all memory of each node
    } else if (r.mem_per_cpu) {
      req.mem_per_cpu_mb = r.mem_mb;
    } else {
      req.mem_per_node_mb = r.mem_mb;
    }
    apply_max_mem_per_cpu(part, req);
    for (const auto& g : r.gres) {
      const auto k = cluster.gres_kind(g.name);
      if (req.gres_per_node.size() <= k) req.gres_per_node.resize(k + 1, 0);
      req.gres_per_node[k] += g.per_node ? g.count : (g.count + req.min_nodes - 1) / req.min_nodes;
    }
    apply_gpu_defaults(cluster, part, r, req);
    req.features = cluster.constraint(trace.strings.name(r.constraints));
    // With EnforcePartLimits (ANY, or YES: every partition over; ALL: any partition over) slurmctld
    // refuses a request over the partition's size at submit; without it the job pends.
    if (const auto& enforce = site.scheduler.enforce_part_limits; enforce != "NO") {
      const auto over = [&](std::uint16_t p) { return classes.over_partition(cluster, p, req); };
      if (enforce == "ALL" ? std::any_of(j.partitions.begin(), j.partitions.end(), over)
                           : std::all_of(j.partitions.begin(), j.partitions.end(), over)) {
        reject("more nodes or CPUs than the partition has (EnforcePartLimits)");
        continue;
      }
    }
    if (std::none_of(j.partitions.begin(), j.partitions.end(),
                     [&](std::uint16_t p) { return classes.could_run(cluster, p, req); })) {
      reject("requested node configuration is not available");
      continue;
    }
    j.eligible =
        options.honour_eligible && r.eligible != kUnsetTime && r.eligible > r.submit ? r.eligible : r.submit;
    out.push_back(std::move(j));
  }
  return out;
}

void apply_gpu_defaults(const ClusterState& cluster, const Partition& part, const JobRecord& r,
                        NodeRequest& req) {
  const auto gpu = cluster.find_gres_kind("gpu");
  if (gpu >= req.gres_per_node.size() || req.gres_per_node[gpu] == 0) return;
  const std::int64_t gpus = req.gres_per_node[gpu];
  // Without --mem or --mem-per-cpu (JOB_MEM_SET), DefMemPerGPU replaces the per-CPU or per-node default;
  // with them a node must still have that much free to be used.
  if (part.def_mem_per_gpu_mb.value_or(0) > 0) {
    req.gres_mem_floor_mb = *part.def_mem_per_gpu_mb * gpus;
    if (r.mem_mb < 0) {
      req.mem_per_cpu_mb = 0;
      req.mem_per_node_mb = req.gres_mem_floor_mb;
    }
  }
  // Only without -c; a trace cannot tell -c1 from none, so one CPU per task counts as none.
  // (Slurm raises each node's CPUs; the total stands for it, exact for one-node jobs.)
  if (r.cpus_per_task <= 1 && part.def_cpu_per_gpu.value_or(0) > 0)
    req.total_cpus = static_cast<std::uint32_t>(std::max<std::int64_t>(
        req.total_cpus, static_cast<std::int64_t>(req.min_nodes) * *part.def_cpu_per_gpu * gpus));
}

void apply_max_mem_per_cpu(const Partition& part, NodeRequest& req) {
  const auto cap = part.max_mem_per_cpu_mb;
  if (cap <= 0 || req.mem_per_cpu_mb <= cap) return;
  const auto ratio = static_cast<std::uint32_t>((req.mem_per_cpu_mb + cap - 1) / cap);
  const std::uint32_t tasks = req.total_cpus / req.cpus_per_task;
  req.cpus_per_task *= ratio;
  req.cpus_per_node *= ratio;  // --ntasks-per-node's CPUs (0 stays 0)
  req.total_cpus = tasks * req.cpus_per_task;
  req.mem_per_cpu_mb = (req.mem_per_cpu_mb + ratio - 1) / ratio;
}

std::int64_t memory_over_node_cap(const Partition& part, const Node* first, const NodeRequest& req) {
  if (part.max_mem_per_node_mb <= 0) return 0;
  std::int64_t per_node = req.mem_per_node_mb;
  if (req.mem_per_cpu_mb > 0) {
    // CPUs per node as it counts them: a whole node's in an OverSubscribe=EXCLUSIVE partition or for
    // --exclusive; else tasks per node (--ntasks-per-node, else 1; at least ceil(tasks / -N) with -N)
    // times CPUs per task.
    std::uint64_t cpus = 0;
    if (part.oversubscribe == OverSubscribe::kExclusive || req.exclusive) {
      cpus = first != nullptr ? first->cpus : 1;
    } else {
      const std::uint64_t tasks = req.total_cpus / req.cpus_per_task;
      std::uint64_t per = req.cpus_per_node > 0 ? req.cpus_per_node / req.cpus_per_task : 1;
      if (req.max_nodes != kUnboundedNodes)
        per = std::max<std::uint64_t>(per, (tasks + req.max_nodes - 1) / req.max_nodes);
      cpus = per * req.cpus_per_task;
    }
    per_node = req.mem_per_cpu_mb * static_cast<std::int64_t>(cpus);
  } else if (per_node < 0) {
    per_node = first != nullptr ? first->real_memory_mb - first->mem_spec_limit_mb : 0;  // a whole node's
  }
  return per_node > part.max_mem_per_node_mb ? per_node : 0;
}

std::size_t add_missing_associations(Site& site, const Trace& trace) {
  std::map<std::pair<std::string, std::string>, bool> have;
  for (const auto& a : site.associations) have[{a.user, a.account}] = true;
  std::size_t added = 0;
  if (!site.find_account("root"))
    site.accounts.insert(site.accounts.begin(), {"root", "", {1, false}, 0, {}, "", {}});
  for (const auto& j : trace.jobs) {
    const auto& user = trace.user_name(j);
    auto account = trace.account_name(j);
    if (user.empty()) continue;
    if (account.empty()) {
      const auto* u = site.find_user(user);
      if (u && !u->default_account.empty())
        account = u->default_account;
      else
        account = "default";
    }
    if (have[{user, account}]) continue;
    have[{user, account}] = true;
    if (!site.find_account(account)) site.accounts.push_back({account, "root", {1, false}, 0, {}, "", {}});
    if (!site.find_user(user)) site.users.push_back({user, account, "None"});
    site.associations.push_back({user, account, "", {1, false}, 0, {}, "", {}});
    ++added;
  }
  return added;
}

}  // namespace slurmtwin::sim
