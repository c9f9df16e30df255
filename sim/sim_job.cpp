#include "sim/sim_job.hpp"

namespace slurmtwin::sim {

static_assert(static_cast<unsigned>(PendingReason::kCount) <= 32, "SimJob::reasons_seen holds 32 reasons");

const char* to_string(PendingReason reason) {
  switch (reason) {
    case PendingReason::kNone:
      return "None";
    case PendingReason::kPriority:
      return "Priority";
    case PendingReason::kResources:
      return "Resources";
    case PendingReason::kPartitionTimeLimit:
      return "PartitionTimeLimit";
    case PendingReason::kPartitionNodeLimit:
      return "PartitionNodeLimit";
    case PendingReason::kQosMaxJobsPerUser:
      return "QOSMaxJobsPerUserLimit";
    case PendingReason::kQosGrpJobs:
      return "QOSGrpJobsLimit";
    case PendingReason::kQosGrpTres:
      return "QOSGrpCpuLimit";
    case PendingReason::kQosMaxTresPerUser:
      return "QOSMaxCpuPerUserLimit";
    case PendingReason::kAssocMaxJobs:
      return "AssocMaxJobsLimit";
    case PendingReason::kAssocGrpTres:
      return "AssocGrpCpuLimit";
    case PendingReason::kBeginTime:
      return "BeginTime";
    case PendingReason::kDependency:
      return "Dependency";
    case PendingReason::kDependencyNeverSatisfied:
      return "DependencyNeverSatisfied";
    case PendingReason::kQosGrpMem:
      return "QOSGrpMemLimit";
    case PendingReason::kQosGrpNode:
      return "QOSGrpNodeLimit";
    case PendingReason::kQosGrpGres:
      return "QOSGrpGRES";
    case PendingReason::kQosMaxTresPerJob:
      return "QOSMaxTRESPerJob";
    case PendingReason::kQosMaxWall:
      return "QOSMaxWallDurationPerJobLimit";
    case PendingReason::kAssocGrpJobs:
      return "AssocGrpJobsLimit";
    case PendingReason::kAssocGrpMem:
      return "AssocGrpMemLimit";
    case PendingReason::kAssocGrpNode:
      return "AssocGrpNodeLimit";
    case PendingReason::kAssocGrpGres:
      return "AssocGrpGRES";
    case PendingReason::kAssocMaxTresPerJob:
      return "AssocMaxTRESPerJob";
    case PendingReason::kAssocMaxWall:
      return "AssocMaxWallDurationPerJobLimit";
    case PendingReason::kPartitionConfig:
      return "PartitionConfig";
    case PendingReason::kReservation:
      return "Reservation";
    case PendingReason::kReqNodeNotAvail:
      return "ReqNodeNotAvail";
    case PendingReason::kPnMemLimit:
      return "MaxMemPerLimit";
    case PendingReason::kCount:
      break;
  }
  return "None";
}

}  // namespace slurmtwin::sim
