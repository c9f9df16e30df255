#pragma once
// One job as read from any trace format: what was requested, and what was recorded (if anything).
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

namespace slurmtwin {

/// Seconds. Absolute times are seconds since the Unix epoch (UTC); durations are seconds.
using Seconds = std::int64_t;
/// A time or duration that the source did not give ("Unknown", "None", -1 in SWF).
inline constexpr Seconds kUnsetTime = std::numeric_limits<Seconds>::min();
/// A time limit of UNLIMITED (or "Partition_Limit": the partition's MaxTime applies).
inline constexpr Seconds kUnlimited = std::numeric_limits<Seconds>::max();
/// Index into one of a Trace's name dictionaries.
using NameIndex = std::uint32_t;
inline constexpr NameIndex kNoName = std::numeric_limits<NameIndex>::max();

/// Final (or current) state of a job record, as sacct names it.
enum class JobState : std::uint8_t {
  kUnknown,
  kPending,
  kRunning,
  kSuspended,
  kCompleted,
  kCancelled,
  kFailed,
  kTimeout,
  kNodeFail,
  kPreempted,
  kOutOfMemory,
  kBootFail,
  kDeadline,
  kRequeued,
  kRevoked,
};

/// Which scheduler started the job (sacct Flags: SchedSubmit / SchedMain / SchedBackfill).
enum class SchedulerPass : std::uint8_t { kUnknown, kSubmit, kMain, kBackfill };

/// One generic resource request, e.g. gpu:tesla_v100:2 -> {"gpu", "tesla_v100", 2}.
struct GresRequest {
  std::string name;
  std::string type;  // empty when untyped
  std::int64_t count = 0;
  bool per_node = true;  // --gres is per node; ReqTRES gres/gpu=N is per job
  bool operator==(const GresRequest&) const = default;
};

/// One job request plus its recorded outcome. Names (user, account, partitions, QOS) are indices into
/// the owning Trace's dictionaries so that a million-job trace stays compact.
struct JobRecord {
  std::uint64_t job_id = 0;      // base job id (array master id for array tasks)
  std::int32_t array_task = -1;  // array task id, -1 when not an array task
  // --array=...%N: at most N of the array's tasks run at once; 0 = no cap
  std::uint32_t array_max_running = 0;
  std::int32_t het_component = -1;  // het job component (+N), -1 when not a het job
  NameIndex user = kNoName;
  NameIndex account = kNoName;
  NameIndex partition = kNoName;  // requested partition list, comma separated ("debug,general")
  NameIndex qos = kNoName;
  NameIndex name = kNoName;         // job name (may be shared among many jobs)
  NameIndex constraints = kNoName;  // --constraint expression, as given
  NameIndex dependency = kNoName;   // --dependency expression, as given
  NameIndex reservation = kNoName;  // --reservation name (sacct Reservation)
  // sacct ReservationId (0: none): slurmdbd leaves the name empty for a job that started in the
  // reservation's first second, but not the id (real Slurm 22.05, docs/simulator.md).
  std::uint32_t reservation_id = 0;
  NameIndex licenses = kNoName;  // -L / --licenses, as given ("matlab:2,ansys"; traces/licenses.hpp)

  Seconds submit = kUnsetTime;      // absolute
  Seconds eligible = kUnsetTime;    // absolute (sacct Eligible / begin time)
  Seconds start = kUnsetTime;       // recorded start, absolute
  Seconds end = kUnsetTime;         // recorded end, absolute
  Seconds runtime = kUnsetTime;     // actual run time (what the job would run if not limited), s
  Seconds time_limit = kUnsetTime;  // requested limit, s; kUnlimited; kUnsetTime = partition default
  // When the user cancelled it (scancel), absolute; kUnsetTime = never. Set for jobs that ended
  // CANCELLED without starting: a replay cancels it then if it is still pending (or running).
  Seconds cancel = kUnsetTime;

  std::uint32_t nodes = 0;           // requested (min) node count; 0 = let the scheduler decide
  std::uint32_t tasks = 1;           // total tasks (-n)
  std::uint32_t tasks_per_node = 0;  // --ntasks-per-node, 0 = unset
  std::uint32_t cpus_per_task = 1;   // -c
  std::uint32_t req_cpus = 0;        // total CPUs requested (tasks * cpus_per_task unless the source says)
  std::uint32_t alloc_cpus = 0;      // recorded allocated CPUs (sacct NCPUS / AllocCPUS), 0 if unknown
  std::int64_t mem_mb = -1;          // requested memory in MB, -1 = not requested (0 = whole node)
  bool mem_per_cpu = false;          // mem_mb is per CPU (--mem-per-cpu, ReqMem "Mc") else per node
  bool exclusive = false;
  std::vector<GresRequest> gres;

  JobState state = JobState::kUnknown;
  SchedulerPass started_by = SchedulerPass::kUnknown;
  std::uint32_t restarts = 0;  // requeue count
  std::int64_t priority = -1;  // recorded priority, -1 if unknown
  std::int32_t nice = 0;
  std::uint64_t source_line = 0;  // first line of this record in its source file (1-based)
};

/// A job recorded CANCELLED that never started (scancel of a pending or held job): sets `cancel` to its
/// recorded end, when the replay cancels it, and `runtime` to end - submit, so that a twin that starts
/// it earlier than real Slurm would have runs it until the cancel. No change to any other job.
void note_cancel_before_start(JobRecord& job);

/// sacct's name for a state ("COMPLETED", "CANCELLED", ...).
const char* to_string(JobState state);
/// Parses a sacct State field ("CANCELLED by 123", "COMPLETED", "OUT_OF_MEMORY", "PD"); nullopt-like
/// kUnknown is never returned for valid input: unknown words throw std::invalid_argument.
JobState parse_job_state(std::string_view text);
const char* to_string(SchedulerPass pass);

}  // namespace slurmtwin
