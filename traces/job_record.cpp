#include "traces/job_record.hpp"

#include <stdexcept>
#include <string>

#include "traces/text.hpp"

namespace slurmtwin {

const char* to_string(JobState s) {
  switch (s) {
    case JobState::kUnknown:
      return "UNKNOWN";
    case JobState::kPending:
      return "PENDING";
    case JobState::kRunning:
      return "RUNNING";
    case JobState::kSuspended:
      return "SUSPENDED";
    case JobState::kCompleted:
      return "COMPLETED";
    case JobState::kCancelled:
      return "CANCELLED";
    case JobState::kFailed:
      return "FAILED";
    case JobState::kTimeout:
      return "TIMEOUT";
    case JobState::kNodeFail:
      return "NODE_FAIL";
    case JobState::kPreempted:
      return "PREEMPTED";
    case JobState::kOutOfMemory:
      return "OUT_OF_MEMORY";
    case JobState::kBootFail:
      return "BOOT_FAIL";
    case JobState::kDeadline:
      return "DEADLINE";
    case JobState::kRequeued:
      return "REQUEUED";
    case JobState::kRevoked:
      return "REVOKED";
  }
  return "UNKNOWN";
}

void note_cancel_before_start(JobRecord& j) {
  if (j.state != JobState::kCancelled || j.start != kUnsetTime || j.end == kUnsetTime ||
      j.submit == kUnsetTime || j.end < j.submit)
    return;
  j.cancel = j.end;
  j.runtime = j.end - j.submit;
}

JobState parse_job_state(std::string_view text) {
  auto t = text::trim(text);
  // "CANCELLED by 123", "CANCELLED+" (sacct marks states with a reason)
  if (auto sp = t.find(' '); sp != std::string_view::npos) t = t.substr(0, sp);
  while (!t.empty() && t.back() == '+') t.remove_suffix(1);
  struct Name {
    const char* full;
    const char* code;
    JobState state;
  };
  static constexpr Name kNames[] = {
      {"PENDING", "PD", JobState::kPending},       {"RUNNING", "R", JobState::kRunning},
      {"SUSPENDED", "S", JobState::kSuspended},    {"COMPLETED", "CD", JobState::kCompleted},
      {"CANCELLED", "CA", JobState::kCancelled},   {"FAILED", "F", JobState::kFailed},
      {"TIMEOUT", "TO", JobState::kTimeout},       {"NODE_FAIL", "NF", JobState::kNodeFail},
      {"PREEMPTED", "PR", JobState::kPreempted},   {"OUT_OF_MEMORY", "OOM", JobState::kOutOfMemory},
      {"BOOT_FAIL", "BF", JobState::kBootFail},    {"DEADLINE", "DL", JobState::kDeadline},
      {"REQUEUED", "RQ", JobState::kRequeued},     {"REVOKED", "RV", JobState::kRevoked},
      {"COMPLETING", "CG", JobState::kRunning},    {"CONFIGURING", "CF", JobState::kRunning},
      {"RESIZING", "RS", JobState::kRunning},      {"REQUEUE_FED", "RF", JobState::kRequeued},
      {"REQUEUE_HOLD", "RH", JobState::kRequeued}, {"SPECIAL_EXIT", "SE", JobState::kFailed},
      {"STOPPED", "ST", JobState::kSuspended},     {"UNKNOWN", "UNK", JobState::kUnknown},
  };
  for (const auto& n : kNames) {
    if (text::iequals(t, n.full) || text::iequals(t, n.code)) return n.state;
  }
  throw std::invalid_argument("unknown job state '" + std::string(text) + "'");
}

const char* to_string(SchedulerPass pass) {
  switch (pass) {
    case SchedulerPass::kUnknown:
      return "unknown";
    case SchedulerPass::kSubmit:
      return "submit";
    case SchedulerPass::kMain:
      return "main";
    case SchedulerPass::kBackfill:
      return "backfill";
  }
  return "unknown";
}

}  // namespace slurmtwin
