#include "sim/sim_job.hpp"

namespace slurmtwin::sim {

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
    case PendingReason::kCount:
      break;
  }
  return "None";
}

}  // namespace slurmtwin::sim
