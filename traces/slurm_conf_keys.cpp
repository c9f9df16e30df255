#include "traces/slurm_conf_keys.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <vector>

#include "traces/did_you_mean.hpp"
#include "traces/text.hpp"

namespace slurmtwin {
namespace {

// Every key slurmctld 22.05.8 accepts (src/common/read_config.c: slurm_conf_options,
// _nodename_options, _partition_options); slurmctld refuses to start on any other.
constexpr std::array<std::string_view, 226> kGlobalKeys = {
    "AccountingStorageBackupHost",
    "AccountingStorageEnforce",
    "AccountingStorageExternalHost",
    "AccountingStorageHost",
    "AccountingStorageLoc",
    "AccountingStorageParameters",
    "AccountingStoragePass",
    "AccountingStoragePort",
    "AccountingStorageTRES",
    "AccountingStorageType",
    "AccountingStorageUser",
    "AccountingStoreFlags",
    "AccountingStoreJobComment",
    "AcctGatherEnergyType",
    "AcctGatherFilesystemType",
    "AcctGatherInfinibandType",
    "AcctGatherInterconnectType",
    "AcctGatherNodeFreq",
    "AcctGatherProfileType",
    "AllowSpecResourcesUsage",
    "AuthAltParameters",
    "AuthAltTypes",
    "AuthInfo",
    "AuthType",
    "BackupAddr",
    "BackupController",
    "BatchStartTimeout",
    "BcastExclude",
    "BcastParameters",
    "BurstBufferParameters",
    "BurstBufferType",
    "CliFilterPlugins",
    "ClusterName",
    "CommunicationParameters",
    "CompleteWait",
    "ControlAddr",
    "ControlMachine",
    "CoreSpecPlugin",
    "CpuFreqDef",
    "CpuFreqGovernors",
    "CredType",
    "CryptoType",
    "DebugFlags",
    "DefCPUPerGPU",
    "DefMemPerCPU",
    "DefMemPerGPU",
    "DefMemPerNode",
    "DependencyParameters",
    "DisableRootJobs",
    "DownNodes",
    "EioTimeout",
    "EnforcePartLimits",
    "Epilog",
    "EpilogMsgTime",
    "EpilogSlurmctld",
    "ExtSensorsFreq",
    "ExtSensorsType",
    "FairShareDampeningFactor",
    "FastSchedule",
    "FederationParameters",
    "FirstJobId",
    "FrontendName",
    "GetEnvTimeout",
    "GpuFreqDef",
    "GresTypes",
    "GroupUpdateForce",
    "GroupUpdateTime",
    "HealthCheckInterval",
    "HealthCheckNodeState",
    "HealthCheckProgram",
    "InactiveLimit",
    "InteractiveStepOptions",
    "JobAcctGatherFrequency",
    "JobAcctGatherParams",
    "JobAcctGatherType",
    "JobCompHost",
    "JobCompLoc",
    "JobCompParams",
    "JobCompPass",
    "JobCompPort",
    "JobCompType",
    "JobCompUser",
    "JobContainerType",
    "JobCredentialPrivateKey",
    "JobCredentialPublicCertificate",
    "JobFileAppend",
    "JobRequeue",
    "JobSubmitPlugins",
    "KeepAliveTime",
    "KillOnBadExit",
    "KillWait",
    "LaunchParameters",
    "LaunchType",
    "Licenses",
    "LogTimeFormat",
    "MailDomain",
    "MailProg",
    "MaxArraySize",
    "MaxDBDMsgs",
    "MaxJobCount",
    "MaxJobId",
    "MaxMemPerCPU",
    "MaxMemPerNode",
    "MaxNodeCount",
    "MaxStepCount",
    "MaxTasksPerNode",
    "MCSParameters",
    "MCSPlugin",
    "MessageTimeout",
    "MinJobAge",
    "MpiDefault",
    "MpiParams",
    "NodeFeaturesPlugins",
    "NodeName",
    "NodeSet",
    "OverTimeLimit",
    "PartitionName",
    "PluginDir",
    "PlugStackConfig",
    "PowerParameters",
    "PowerPlugin",
    "PreemptExemptTime",
    "PreemptMode",
    "PreemptType",
    "PrEpParameters",
    "PrEpPlugins",
    "PriorityCalcPeriod",
    "PriorityDecayHalfLife",
    "PriorityFavorSmall",
    "PriorityFlags",
    "PriorityMaxAge",
    "PriorityParameters",
    "PrioritySiteFactorParameters",
    "PrioritySiteFactorPlugin",
    "PriorityType",
    "PriorityUsageResetPeriod",
    "PriorityWeightAge",
    "PriorityWeightAssoc",
    "PriorityWeightFairshare",
    "PriorityWeightJobSize",
    "PriorityWeightPartition",
    "PriorityWeightQOS",
    "PriorityWeightTRES",
    "PrivateData",
    "ProctrackType",
    "Prolog",
    "PrologEpilogTimeout",
    "PrologFlags",
    "PrologSlurmctld",
    "PropagatePrioProcess",
    "PropagateResourceLimits",
    "PropagateResourceLimitsExcept",
    "RebootProgram",
    "ReconfigFlags",
    "RequeueExit",
    "RequeueExitHold",
    "ResumeFailProgram",
    "ResumeProgram",
    "ResumeRate",
    "ResumeTimeout",
    "ResvEpilog",
    "ResvOverRun",
    "ResvProlog",
    "ReturnToService",
    "RoutePlugin",
    "SallocDefaultCommand",
    "SbcastParameters",
    "SchedulerAuth",
    "SchedulerParameters",
    "SchedulerTimeSlice",
    "SchedulerType",
    "ScronParameters",
    "SelectType",
    "SelectTypeParameters",
    "SlurmctldAddr",
    "SlurmctldDebug",
    "SlurmctldHost",
    "SlurmctldLogFile",
    "SlurmctldParameters",
    "SlurmctldPidFile",
    "SlurmctldPlugstack",
    "SlurmctldPort",
    "SlurmctldPrimaryOffProg",
    "SlurmctldPrimaryOnProg",
    "SlurmctldSyslogDebug",
    "SlurmctldTimeout",
    "SlurmdDebug",
    "SlurmdLogFile",
    "SlurmdParameters",
    "SlurmdPidFile",
    "SlurmdPort",
    "SlurmdSpoolDir",
    "SlurmdSyslogDebug",
    "SlurmdTimeout",
    "SlurmdUser",
    "SlurmSchedLogFile",
    "SlurmSchedLogLevel",
    "SlurmUser",
    "SrunEpilog",
    "SrunPortRange",
    "SrunProlog",
    "StateSaveLocation",
    "SuspendExcNodes",
    "SuspendExcParts",
    "SuspendProgram",
    "SuspendRate",
    "SuspendTime",
    "SuspendTimeout",
    "SwitchParameters",
    "SwitchType",
    "TaskEpilog",
    "TaskPlugin",
    "TaskPluginParam",
    "TaskProlog",
    "TCPTimeout",
    "TmpFS",
    "TopologyParam",
    "TopologyPlugin",
    "TrackWCKey",
    "TreeWidth",
    "UnkillableStepProgram",
    "UnkillableStepTimeout",
    "UsePAM",
    "VSizeFactor",
    "WaitTime",
    "X11Parameters",
};
constexpr std::array<std::string_view, 24> kNodeKeys = {
    "BcastAddr",       "Boards",  "CoreSpecCount",  "CoresPerSocket", "CpuBind",      "CPUs",
    "CPUSpecList",     "Feature", "Features",       "Gres",           "MemSpecLimit", "NodeAddr",
    "NodeHostname",    "Port",    "Procs",          "RealMemory",     "Reason",       "Sockets",
    "SocketsPerBoard", "State",   "ThreadsPerCore", "TmpDisk",        "TRESWeights",  "Weight",
};
constexpr std::array<std::string_view, 42> kPartitionKeys = {
    "AllocNodes",
    "AllowAccounts",
    "AllowGroups",
    "AllowQos",
    "Alternate",
    "CpuBind",
    "Default",
    "DefaultTime",
    "DefCPUPerGPU",
    "DefMemPerCPU",
    "DefMemPerGPU",
    "DefMemPerNode",
    "DenyAccounts",
    "DenyQos",
    "DisableRootJobs",
    "ExclusiveUser",
    "GraceTime",
    "Hidden",
    "LLN",
    "MaxCPUsPerNode",
    "MaxMemPerCPU",
    "MaxMemPerNode",
    "MaxNodes",
    "MaxTime",
    "MinNodes",
    "Nodes",
    "OverSubscribe",
    "OverTimeLimit",
    "PreemptMode",
    "Priority",
    "PriorityJobFactor",
    "PriorityTier",
    "QOS",
    "ReqResv",
    "ResumeTimeout",
    "RootOnly",
    "SelectTypeParameters",
    "Shared",
    "State",
    "SuspendTime",
    "SuspendTimeout",
    "TRESBillingWeights",
};

// Known keys that change what the scheduler decides but that the simulator does not model, with the
// effect an admin should weigh (every other known key that is not modelled has no effect on
// scheduling decisions: paths, daemons, authentication, logging, timeouts of the RPC layer).
struct Effect {
  std::string_view key;
  std::string_view effect;
};
constexpr std::array kSchedulingEffects = {
    Effect{"SchedulerTimeSlice", "gang time slicing is not modelled"},
    Effect{"PreemptParameters",
           "preemption tuning (reorder_count, strict_order, youngest_first, ...) is not modelled"},
    Effect{"MaxJobCount", "the cap on jobs in the controller is not enforced"},
    Effect{"MaxArraySize", "the array size cap is not enforced"},
    Effect{"PrologFlags", "prolog timing is not modelled"},
    Effect{"PriorityParameters", "priority plugin options are not modelled"},
    Effect{"PrioritySiteFactorPlugin", "a site factor plugin's values are not modelled"},
    Effect{"PrioritySiteFactorParameters", "site factor parameters are not modelled"},
    Effect{"ReservationEpilog", "reservations are not modelled"},
    Effect{"NodeFeaturesPlugins", "changeable node features are not modelled"},
    Effect{"SuspendTime", "power saving is not modelled: nodes never power down"},
    Effect{"ResumeTimeout", "power saving is not modelled: nodes never power down"},
    Effect{"ReconfigFlags", "reconfiguration is not modelled"},
    Effect{"CompleteWait", "the wait for completing jobs before scheduling is not modelled"},
    Effect{"EpilogMsgTime", "epilog completion timing is not modelled: nodes are free when a job ends"},
    Effect{"HealthCheckProgram", "node health checks are not modelled: nodes never drain"},
    Effect{"MCSPlugin", "MCS node sharing rules are not modelled"},
    Effect{"JobSubmitPlugins", "job_submit plugins (which may rewrite requests) are not modelled"},
    Effect{"GresTypes", "only the GRES named on nodes and in gres.conf are counted"},
};

template <std::size_t N>
bool contains(const std::array<std::string_view, N>& keys, std::string_view key) {
  return std::any_of(keys.begin(), keys.end(), [&](std::string_view k) { return text::iequals(k, key); });
}

template <std::size_t N>
std::string nearest(const std::array<std::string_view, N>& keys, std::string_view key) {
  return nearest_name(std::vector<std::string_view>(keys.begin(), keys.end()), key);
}

}  // namespace

// Global keys slurmctld no longer reads, with the last version that did (major * 100 + minor): the
// difference of slurm_conf_options between each release's last tag (17.11.13 .. 21.08.8) and 22.05.8.
// None changes a scheduling decision (checkpointing, storage defaults, caches, message aggregation).
struct RemovedKey {
  std::string_view key;
  int last_version;
};
constexpr std::array<RemovedKey, 15> kRemovedGlobalKeys = {{
    {"CacheGroups", 2011},
    {"CheckpointType", 2011},
    {"ChosLoc", 2002},
    {"DefaultStorageHost", 2011},
    {"DefaultStorageLoc", 2011},
    {"DefaultStoragePass", 2011},
    {"DefaultStoragePort", 2011},
    {"DefaultStorageType", 2011},
    {"DefaultStorageUser", 2011},
    {"JobCheckpointDir", 2011},
    {"Layouts", 2002},
    {"MemLimitEnforce", 2011},
    {"MsgAggregationParams", 2002},
    {"SchedulerPort", 2011},
    {"SchedulerRootFilter", 2011},
}};

int last_version_reading(std::string_view key) {
  for (const auto& r : kRemovedGlobalKeys)
    if (text::iequals(r.key, key)) return r.last_version;
  return 0;
}

bool known_slurm_conf_key(SlurmConfSection section, std::string_view key, int version) {
  switch (section) {
    case SlurmConfSection::kGlobal:
      if (contains(kGlobalKeys, key)) return true;
      if (const int last = last_version_reading(key)) return version <= last;
      return false;
    case SlurmConfSection::kNode:
      return contains(kNodeKeys, key) || text::iequals(key, "NodeName");
    case SlurmConfSection::kPartition:
      return contains(kPartitionKeys, key) || text::iequals(key, "PartitionName");
  }
  return false;
}

std::string nearest_slurm_conf_key(SlurmConfSection section, std::string_view key) {
  switch (section) {
    case SlurmConfSection::kGlobal:
      return nearest(kGlobalKeys, key);
    case SlurmConfSection::kNode:
      return nearest(kNodeKeys, key);
    case SlurmConfSection::kPartition:
      return nearest(kPartitionKeys, key);
  }
  return {};
}

std::string_view scheduling_effect(std::string_view key) {
  for (const auto& e : kSchedulingEffects)
    if (text::iequals(e.key, key)) return e.effect;
  return {};
}

}  // namespace slurmtwin
