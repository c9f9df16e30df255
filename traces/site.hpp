#pragma once
// The value-type model of a Slurm site: nodes, partitions, QOS, the association tree and the
// scheduler settings. Defaults are those of current Slurm (see docs/site-schema.md and
// ../shared/reference/slurm-scheduling-spec.md). Produced by the importers and the YAML loader,
// validated once, then treated as const.
#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "traces/job_record.hpp"
#include "traces/licenses.hpp"
#include "traces/slurm_version.hpp"

namespace slurmtwin {

/// A count of one TRES per name: "cpu=10,mem=2000,gres/gpu=2" (memory in MB).
using TresMap = std::map<std::string, std::int64_t>;
/// Weights per TRES name: "CPU=1.0,Mem=0.25G,GRES/gpu=2" (memory weight per MB). Keys lower-case.
using TresWeights = std::map<std::string, double>;

/// One GRES a node has, e.g. gpu:tesla_v100:2.
struct NodeGres {
  std::string name;
  std::string type;
  std::int64_t count = 0;
  bool operator==(const NodeGres&) const = default;
};

struct Node {
  std::string name;
  std::uint32_t cpus = 1;  // CPUs = sockets * cores * threads unless given (Slurm's _parse_nodename)
  std::uint32_t boards = 1;
  std::uint32_t sockets = 1;  // sockets of the whole node (Boards already factored in, as Slurm's Sockets=)
  std::uint32_t cores_per_socket = 1;
  std::uint32_t threads_per_core = 1;
  std::int64_t real_memory_mb = 1;  // Slurm default RealMemory=1
  std::int64_t mem_spec_limit_mb = 0;
  std::vector<NodeGres> gres;
  std::uint32_t weight = 1;
  std::vector<std::string> features;
  std::string state = "UNKNOWN";  // as configured (State=)
  bool operator==(const Node&) const = default;
};

enum class PreemptMode : std::uint8_t {
  kOff,
  kCancel,
  kRequeue,
  kSuspend,
  kGang,
  kSuspendGang,
  kWithin,
  kUnset
};
const char* to_string(PreemptMode mode);
/// Parses "OFF", "CANCEL", "REQUEUE", "SUSPEND", "GANG", "SUSPEND,GANG", "WITHIN" (case-insensitive).
PreemptMode parse_preempt_mode(std::string_view text);

enum class OverSubscribe : std::uint8_t { kNo, kYes, kForce, kExclusive };

struct Partition {
  std::string name;
  std::vector<std::string> nodes;  // node names, in slurm.conf order
  bool is_default = false;
  std::string state = "UP";
  Seconds max_time = kUnlimited;        // s
  Seconds default_time = kUnsetTime;    // s; unset = MaxTime applies
  std::int64_t def_mem_per_cpu_mb = 0;  // 0 = unset
  std::int64_t def_mem_per_node_mb = 0;
  std::int64_t max_mem_per_cpu_mb = 0;
  std::int64_t max_mem_per_node_mb = 0;
  // select/cons_tres's per-GPU defaults (unset: slurm.conf's global ones, else none). A job with GPUs
  // and without -c gets at least this many CPUs per GPU on each node; without --mem/--mem-per-cpu,
  // this much memory per GPU on each node instead of DefMemPer* (job_test.c _set_gpu_defaults).
  std::optional<std::int64_t> def_cpu_per_gpu;
  std::optional<std::int64_t> def_mem_per_gpu_mb;
  std::uint32_t min_nodes = 0;
  std::uint32_t max_nodes = 0;  // 0 = unlimited
  std::uint16_t priority_job_factor = 1;
  std::uint16_t priority_tier = 1;
  OverSubscribe oversubscribe = OverSubscribe::kNo;
  std::uint16_t oversubscribe_count = 1;
  bool exclusive_user = false;
  std::vector<std::string> allow_qos;       // empty = ALL
  std::vector<std::string> allow_accounts;  // empty = ALL
  std::vector<std::string> deny_accounts;
  std::string qos;                                 // partition QOS ("" = none)
  PreemptMode preempt_mode = PreemptMode::kUnset;  // unset = cluster PreemptMode
  Seconds grace_time = 0;
  Seconds over_time_limit = 0;
  TresWeights tres_billing_weights;
  bool operator==(const Partition&) const = default;
};

/// QOS and association limits that Slurm enforces at scheduling time (the common subset we model).
struct Limits {
  TresMap grp_tres;
  std::optional<std::int64_t> grp_jobs;
  std::optional<std::int64_t> grp_submit_jobs;
  TresMap max_tres_per_job;
  TresMap max_tres_per_user;     // QOS MaxTRESPerUser
  TresMap max_tres_per_account;  // QOS MaxTRESPerAccount: running jobs of one account in the QOS
  TresMap max_tres_per_node;
  std::optional<std::int64_t> max_jobs_per_user;            // QOS MaxJobsPerUser / assoc MaxJobs
  std::optional<std::int64_t> max_submit_jobs_per_user;     // QOS MaxSubmitJobsPerUser / assoc MaxSubmitJobs
  std::optional<std::int64_t> max_jobs_per_account;         // QOS MaxJobsPerAccount (running)
  std::optional<std::int64_t> max_submit_jobs_per_account;  // QOS MaxSubmitJobsPerAccount
  std::optional<Seconds> max_wall;                          // per job, s
  // Accrue limits: how many pending jobs may accrue age (acct_policy_handle_accrue_time); the rest
  // wait at age 0 until a counted one starts.
  std::optional<std::int64_t> grp_jobs_accrue;              // GrpJobsAccrue (QOS or association subtree)
  std::optional<std::int64_t> max_jobs_accrue_per_user;     // QOS MaxJobsAccruePU / assoc MaxJobsAccrue
  std::optional<std::int64_t> max_jobs_accrue_per_account;  // QOS MaxJobsAccruePA
  // TRES-minutes (a TRES count x minutes), checked once a job's nodes are chosen:
  TresMap grp_tres_mins;               // GrpTRESMins: used (decayed, as fair-share usage) by the QOS/subtree
  TresMap grp_tres_run_mins;           // GrpTRESRunMins: running jobs' TRES x time limit left
  TresMap max_tres_mins_per_job;       // QOS MaxTRESMinsPerJob / assoc MaxTRESMins: TRES x time limit
  TresMap min_tres_per_job;            // QOS MinTRESPerJob
  TresMap max_tres_run_mins_per_user;  // QOS MaxTRESRunMinsPU (enforced from Slurm 24.05)
  TresMap max_tres_run_mins_per_account;  // QOS MaxTRESRunMinsPA (enforced from Slurm 24.05)
  bool operator==(const Limits&) const = default;
};

/// Limits' job-count fields and their key in the site YAML (one table for writing and reading).
struct CountLimitField {
  const char* key;
  std::optional<std::int64_t> Limits::*field;
};
inline constexpr std::array<CountLimitField, 9> kCountLimitFields = {{
    {"grp_jobs", &Limits::grp_jobs},
    {"grp_submit_jobs", &Limits::grp_submit_jobs},
    {"max_jobs_per_user", &Limits::max_jobs_per_user},
    {"max_submit_jobs_per_user", &Limits::max_submit_jobs_per_user},
    {"max_jobs_per_account", &Limits::max_jobs_per_account},
    {"max_submit_jobs_per_account", &Limits::max_submit_jobs_per_account},
    {"grp_jobs_accrue", &Limits::grp_jobs_accrue},
    {"max_jobs_accrue_per_user", &Limits::max_jobs_accrue_per_user},
    {"max_jobs_accrue_per_account", &Limits::max_jobs_accrue_per_account},
}};

/// The TRES that QOS and association TRES limits count (in this order: the replay's slots); a limit on
/// another TRES (a license, another GRES) is read and kept but not enforced (unenforced_limits says so).
/// billing is the job's TRES weighted by its partition's TRESBillingWeights, truncated to a whole number
/// as slurmctld stores it in the job's TRES counts.
inline constexpr std::array<const char*, 5> kLimitTres = {"cpu", "mem", "node", "gres/gpu", "billing"};

/// Limits' TRES-count fields and their key in the site YAML (one table for writing and reading).
struct TresLimitField {
  const char* key;
  TresMap Limits::*field;
};
inline constexpr std::array<TresLimitField, 11> kTresLimitFields = {{
    {"grp_tres", &Limits::grp_tres},
    {"max_tres_per_job", &Limits::max_tres_per_job},
    {"max_tres_per_user", &Limits::max_tres_per_user},
    {"max_tres_per_account", &Limits::max_tres_per_account},
    {"max_tres_per_node", &Limits::max_tres_per_node},
    {"grp_tres_mins", &Limits::grp_tres_mins},
    {"grp_tres_run_mins", &Limits::grp_tres_run_mins},
    {"max_tres_mins_per_job", &Limits::max_tres_mins_per_job},
    {"min_tres_per_job", &Limits::min_tres_per_job},
    {"max_tres_run_mins_per_user", &Limits::max_tres_run_mins_per_user},
    {"max_tres_run_mins_per_account", &Limits::max_tres_run_mins_per_account},
}};

struct Qos {
  std::string name;
  std::uint32_t priority = 0;
  double usage_factor = 1.0;
  std::vector<std::string> preempt;                // QOS names this QOS may preempt
  PreemptMode preempt_mode = PreemptMode::kUnset;  // unset = cluster default
  std::optional<Seconds> preempt_exempt_time;
  Seconds grace_time = 0;
  std::set<std::string> flags;  // e.g. NoDecay, DenyOnLimit, OverPartQOS
  Limits limits;
  bool operator==(const Qos&) const = default;
};

/// Shares of an association: a number, or "parent" (the association takes its parent's place).
struct Shares {
  std::uint32_t value = 1;  // Slurm default Fairshare=1
  bool parent = false;
  bool operator==(const Shares&) const = default;
};

/// A non-user association: an account node in the tree. The root account is "root".
struct Account {
  std::string name;
  std::string parent = "root";  // "" for root itself
  Shares shares;
  std::uint32_t priority = 0;    // association Priority
  std::vector<std::string> qos;  // allowed QOS (inherited from parent when empty)
  std::string default_qos;
  Limits limits;
  bool operator==(const Account&) const = default;
};

/// A user association: (user, account[, partition]).
struct UserAssoc {
  std::string user;
  std::string account;
  std::string partition;  // "" = any
  Shares shares;
  std::uint32_t priority = 0;
  std::vector<std::string> qos;  // empty = inherited from the account
  std::string default_qos;
  Limits limits;
  bool operator==(const UserAssoc&) const = default;
};

struct User {
  std::string name;
  std::string default_account;
  std::string admin_level = "None";
  bool operator==(const User&) const = default;
};

/// SchedulerParameters that shape scheduling (defaults: current Slurm, spec §1, §6).
struct SchedulerParameters {
  // main scheduler
  std::uint32_t default_queue_depth = 100;
  Seconds sched_interval = 60;
  Seconds batch_sched_delay = 3;
  std::int64_t sched_min_interval_us = 2;
  std::int64_t max_sched_time_s = 2;      // 0 = derived default
  std::uint32_t partition_job_depth = 0;  // 0 = unlimited
  bool defer = false;
  bool defer_batch = false;
  bool allow_zero_lic = false;  // a job may ask more licences than the site has (then never starts)
  // backfill
  Seconds bf_interval = 30;
  Seconds bf_window = 1440 * 60;  // bf_window is given in minutes in slurm.conf; stored in seconds
  Seconds bf_resolution = 60;
  std::uint32_t bf_max_job_test = 500;
  std::uint32_t bf_max_job_user = 0;
  std::uint32_t bf_max_job_part = 0;
  std::uint32_t bf_max_job_user_part = 0;
  std::uint32_t bf_max_job_start = 0;
  std::uint32_t bf_max_job_array_resv = 20;
  std::int64_t bf_min_prio_reserve = 0;
  Seconds bf_min_age_reserve = 0;
  bool bf_continue = false;
  bool bf_busy_nodes = false;
  bool bf_one_resv_per_job = false;
  Seconds bf_max_time = 0;  // 0 = bf_interval
  Seconds bf_yield_interval_us = 2'000'000;
  Seconds bf_yield_sleep_us = 500'000;
  std::map<std::string, std::string> other;  // options accepted but not modelled (e.g. max_script_size)
  bool operator==(const SchedulerParameters&) const = default;
};

/// Cluster-wide scheduling and priority settings (slurm.conf).
struct SchedulerSettings {
  // The site's Slurm, major * 100 + minor (2002 for 20.02): behaviour that changed between versions
  // follows it (before 22.05 the backfill thread never idles while jobs pend).
  int slurm_version = kModelledSlurmVersion;
  std::string scheduler_type = "sched/backfill";
  std::string priority_type = "priority/multifactor";
  std::uint32_t weight_age = 0;
  std::uint32_t weight_assoc = 0;
  std::uint32_t weight_fairshare = 0;
  std::uint32_t weight_job_size = 0;
  std::uint32_t weight_partition = 0;
  std::uint32_t weight_qos = 0;
  TresWeights weight_tres;  // PriorityWeightTRES, keys lower-case ("cpu", "mem", "gres/gpu")
  Seconds decay_half_life = 7 * 86400;
  Seconds calc_period = 300;
  Seconds max_age = 7 * 86400;
  bool favor_small = false;
  std::set<std::string> priority_flags = {"FAIR_TREE"};  // upper-case flag names
  std::string usage_reset_period = "NONE";               // NONE NOW DAILY WEEKLY MONTHLY QUARTERLY YEARLY
  std::uint32_t fairshare_dampening_factor = 1;
  SchedulerParameters params;
  std::string preempt_type = "preempt/none";
  PreemptMode preempt_mode = PreemptMode::kOff;
  Seconds preempt_exempt_time = 0;
  std::string select_type = "select/cons_tres";
  std::set<std::string> select_type_parameters = {"CR_Core_Memory"};
  Seconds kill_wait = 30;
  Seconds over_time_limit = 0;
  Seconds min_job_age = 300;
  std::string enforce_part_limits = "NO";
  std::set<std::string> accounting_storage_enforce;  // lower-case: associations, limits, qos, safe
  std::vector<std::string> accounting_storage_tres;  // extra TRES tracked, e.g. gres/gpu
  std::uint32_t first_job_id = 1;
  bool job_requeue = true;
  // topology/tree places jobs by Site::switches; any other plugin (topology/flat, Slurm 22.05's
  // topology/none) as flat. TopologyParam options, as written (TopoOptional: flat unless --switches).
  std::string topology_plugin = "topology/flat";
  std::set<std::string> topology_param;
  bool operator==(const SchedulerSettings&) const = default;
};

/// An advanced reservation (`scontrol create reservation`): its nodes are held over [start, end) for
/// the jobs that ask for it (`--reservation`); every other job keeps off them (Slurm 22.05
/// job_test_resv; docs/simulator.md, "Reservations and outages").
struct Reservation {
  std::string name;
  std::uint32_t id = 0;               // the accounting's id (sacctmgr show reservation ID); 0: unknown
  Seconds start = 0;                  // absolute, s (UTC)
  Seconds end = 0;                    // absolute, s (UTC); > start
  std::vector<std::string> nodes;     // node names (whole nodes)
  std::vector<std::string> users;     // may use it; a leading '-' on the first denies the list instead
  std::vector<std::string> accounts;  // the same for accounts (both lists given: both must allow)
  std::set<std::string> flags;        // upper case, as scontrol prints them (MAINT, FLEX, ...)
  bool operator==(const Reservation&) const = default;
  bool has(std::string_view flag) const { return flags.count(std::string(flag)) > 0; }
};

/// A node out of service over [start, end) (`sacctmgr show event`): it starts no job. DRAIN lets the
/// jobs on it run to their end; DOWN (in Slurm) ends them, which a replay takes from the trace.
struct NodeOutage {
  std::string node;
  Seconds start = 0;         // absolute, s (UTC)
  Seconds end = kUnlimited;  // absolute, s (UTC); kUnlimited: still out when the record was made
  std::string state;         // DOWN, DRAIN or FAIL, as sacctmgr printed it (without * or $)
  std::string reason;
  bool operator==(const NodeOutage&) const = default;
};

/// A network switch of topology.conf: a leaf lists nodes, a higher switch its child switches (its
/// nodes are theirs). File order is Slurm's switch order, which breaks ties in node choice.
struct Switch {
  std::string name;
  std::vector<std::string> nodes;     // a leaf's nodes (names)
  std::vector<std::string> children;  // a higher switch's child switches (names)
  bool operator==(const Switch&) const = default;
};

/// A whole site. Node order is the slurm.conf order (Slurm's node index order).
struct Site {
  std::string cluster_name = "cluster";
  std::vector<Node> nodes;
  std::vector<Partition> partitions;
  std::vector<Qos> qos;
  std::vector<Account> accounts;  // includes "root"
  std::vector<UserAssoc> associations;
  std::vector<User> users;
  SchedulerSettings scheduler;
  std::vector<Reservation> reservations;
  std::vector<NodeOutage> outages;     // sorted by start
  std::vector<Switch> switches;        // topology.conf, file order; empty: none
  std::vector<LicenseCount> licenses;  // slurm.conf Licenses=: the cluster's licences, by name
  bool operator==(const Site&) const = default;

  /// Whether jobs are placed by the switch tree (topology/tree with switches, without TopoOptional:
  /// this model has no --switches, so with it every job is placed as under topology/flat).
  bool places_by_switch() const;
  const Node* find_node(std::string_view name) const;
  const Partition* find_partition(std::string_view name) const;
  const Qos* find_qos(std::string_view name) const;
  const Account* find_account(std::string_view name) const;
  const User* find_user(std::string_view name) const;
  const LicenseCount* find_license(std::string_view name) const;
  /// Throwing twins: name the missing key.
  const Partition& partition(std::string_view name) const;
  const Qos& qos_named(std::string_view name) const;
  /// The default partition (Default=YES), else the first one; nullptr when there are none.
  const Partition* default_partition() const;
};

/// OverTimeLimit for jobs run in partition `partition` (s): the partition's when it sets one (> 0),
/// else the cluster's, as slurmctld reads part_ptr->over_time_limit unless it is unset. kUnlimited:
/// a job is never ended for its time limit.
Seconds over_time_limit(const Site& site, std::size_t partition);

/// Checks cross references (partition nodes exist, QOS names, account parents, user default
/// accounts); throws std::invalid_argument naming the first problem.
void validate(const Site& site);

/// One warning for each kind of limit the site sets that the replay, as Slurm, reads without
/// enforcing: limits at all without AccountingStorageEnforce=limits (Slurm does not either), TRES
/// outside kLimitTres (billing, licenses, other GRES), MaxTRESRunMinsPU/PA before Slurm 24.05.
std::vector<std::string> unenforced_limits(const Site& site);

/// Parses "cpu=10,mem=2G,gres/gpu=2,node=1" (memory converted to MB). Throws std::invalid_argument.
TresMap parse_tres_counts(std::string_view text);
/// Parses "CPU=1000,Mem=0.25G,GRES/gpu=3000": keys lower-cased, a unit suffix on a Mem weight
/// converts it to per-MB (Mem=0.25G -> 0.25/1024). Throws std::invalid_argument.
TresWeights parse_tres_weights(std::string_view text);

}  // namespace slurmtwin
