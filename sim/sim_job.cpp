#include "sim/sim_job.hpp"

#include <array>

namespace slurmtwin::sim {

namespace {

// squeue's words for the PendingReasons (slurm_protocol_defs.c job_reason_string), in enum order.
constexpr std::array<const char*, static_cast<std::size_t>(PendingReason::kCount)> kReasonNames = {
    "None",
    "Priority",
    "Resources",
    "PartitionTimeLimit",
    "PartitionNodeLimit",
    "QOSMaxJobsPerUserLimit",
    "QOSGrpJobsLimit",
    "QOSGrpCpuLimit",
    "QOSMaxCpuPerUserLimit",
    "AssocMaxJobsLimit",
    "AssocGrpCpuLimit",
    "BeginTime",
    "Dependency",
    "DependencyNeverSatisfied",
    "QOSGrpMemLimit",
    "QOSGrpNodeLimit",
    "QOSGrpGRES",
    "QOSMaxTRESPerJob",
    "QOSMaxWallDurationPerJobLimit",
    "AssocGrpJobsLimit",
    "AssocGrpMemLimit",
    "AssocGrpNodeLimit",
    "AssocGrpGRES",
    "AssocMaxTRESPerJob",
    "AssocMaxWallDurationPerJobLimit",
    "PartitionConfig",
    "Reservation",
    "ReqNodeNotAvail",
    "MaxMemPerLimit",
    // the blocks of four (CPUs, memory, nodes, GPUs); the run-minutes per user/account ones as 24.05 words
    // them
    "QOSGrpCPUMinutesLimit",
    "QOSGrpMemoryMinutes",
    "QOSGrpNodeMinutes",
    "QOSGrpGRESMinutes",
    "QOSGrpCPURunMinutesLimit",
    "QOSGrpMemoryRunMinutes",
    "QOSGrpNodeRunMinutes",
    "QOSGrpGRESRunMinutes",
    "QOSMaxCpuMinutesPerJobLimit",
    "QOSMaxMemoryMinutesPerJob",
    "QOSMaxNodeMinutesPerJob",
    "QOSMaxGRESMinutesPerJob",
    "QOSMaxCpuPerNode",
    "QOSMaxMemoryPerNode",
    "QOSMaxUnknownPerNode",
    "QOSMaxGRESPerNode",
    "QOSMinCpuNotSatisfied",
    "QOSMinMemory",
    "QOSMinNode",
    "QOSMinGRES",
    "MaxCpuRunMinsPerUser",
    "MaxMemoryRunMinsPerUser",
    "MaxNodeRunMinsPerUser",
    "MaxGRESRunMinsPerUser",
    "MaxCpuRunMinsPerAccount",
    "MaxMemoryRunMinsPerAccount",
    "MaxNodeRunMinsPerAccount",
    "MaxGRESRunMinsPerAccount",
    "AssocGrpCPUMinutesLimit",
    "AssocGrpMemMinutes",
    "AssocGrpNodeMinutes",
    "AssocGrpGRESMinutes",
    "AssocGrpCPURunMinutesLimit",
    "AssocGrpMemRunMinutes",
    "AssocGrpNodeRunMinutes",
    "AssocGrpGRESRunMinutes",
    "AssocMaxCpuMinutesPerJobLimit",
    "AssocMaxMemMinutesPerJob",
    "AssocMaxNodeMinutesPerJob",
    "AssocMaxGRESMinutesPerJob",
    "AssocMaxCpuPerNode",
    "AssocMaxMemPerNode",
    "AssocMaxUnknownPerNode",
    "AssocMaxGRESPerNode",
    "MaxCpuPerAccount",
    "MaxMemoryPerAccount",
    "MaxNodePerAccount",
    "MaxGRESPerAccount",
    "MaxJobsPerAccount",
    "JobArrayTaskLimit",
};

}  // namespace

const char* to_string(PendingReason reason) {
  const auto i = static_cast<std::size_t>(reason);
  return i < kReasonNames.size() ? kReasonNames[i] : "None";
}

}  // namespace slurmtwin::sim
