#pragma once
// A whole job trace: records in source order plus the dictionaries their names index into.
#include <string>
#include <vector>

#include "traces/job_record.hpp"
#include "traces/name_dictionary.hpp"

namespace slurmtwin {

/// A trace as loaded from any format. Jobs keep their source order; `origin` is the absolute time
/// (epoch s) that relative formats (events -dt, SWF) count from.
struct Trace {
  std::vector<JobRecord> jobs;
  NameDictionary users;
  NameDictionary accounts;
  NameDictionary partitions;  // requested partition lists, e.g. "debug,general-compute"
  NameDictionary qos;
  NameDictionary strings;  // job names, constraints, dependencies
  Seconds origin = 0;
  std::string source;  // file name(s) it came from

  const std::string& user_name(const JobRecord& j) const { return users.name(j.user); }
  const std::string& account_name(const JobRecord& j) const { return accounts.name(j.account); }
  const std::string& partition_name(const JobRecord& j) const { return partitions.name(j.partition); }
  const std::string& qos_name(const JobRecord& j) const { return qos.name(j.qos); }
};

}  // namespace slurmtwin
