#include "traces/native_format.hpp"

#include <fmt/format.h>

#include "traces/binary_io.hpp"
#include "traces/file_io.hpp"
#include "traces/input_limits.hpp"
#include "traces/read_report.hpp"

namespace slurmtwin {
namespace {

constexpr char kMagic[8] = {'S', 'T', 'W', 'T', 'R', 'A', 'C', 'E'};
/// Bytes of a job with no GRES: id 8, array task and het component 4+4, 7 name indices 4 each, 6 times
/// 8 each, 6 counts 4 each, memory 8, flags/state/pass 1+1+1, restarts 4, priority 8, nice 4, source
/// line 8, GRES count 2.
constexpr std::size_t kMinJobBytes = 8 + 4 + 4 + 7 * 4 + 6 * 8 + 6 * 4 + 8 + 3 + 4 + 8 + 4 + 8 + 2;
constexpr const char* kWhat = "native trace";

void put(ByteWriter& w, const NameDictionary& d) {
  w.put(static_cast<std::uint32_t>(d.size()));
  for (const auto& n : d.names()) w.put(n);
}

void get(ByteReader& r, NameDictionary& d) {
  const auto n = r.get<std::uint32_t>();
  for (std::uint32_t i = 0; i < n; ++i) d.intern(r.get_string());
}

}  // namespace

bool is_native_trace(const std::string& bytes) {
  return has_magic(bytes, kMagic);
}

std::string encode_native_trace(const Trace& t, bool with_source) {
  ByteWriter w;
  w.put(t.origin);
  w.put(with_source ? t.source : std::string());
  for (const auto* d : {&t.users, &t.accounts, &t.partitions, &t.qos, &t.strings}) put(w, *d);
  w.put(static_cast<std::uint64_t>(t.jobs.size()));
  for (const auto& j : t.jobs) {
    w.put(j.job_id);
    w.put(j.array_task);
    w.put(j.het_component);
    for (auto n : {j.user, j.account, j.partition, j.qos, j.name, j.constraints, j.dependency}) w.put(n);
    for (auto s : {j.submit, j.eligible, j.start, j.end, j.runtime, j.time_limit, j.cancel}) w.put(s);
    w.put(j.reservation);
    w.put(j.reservation_id);
    w.put(j.array_max_running);
    w.put(j.licenses);
    for (auto c : {j.nodes, j.tasks, j.tasks_per_node, j.cpus_per_task, j.req_cpus, j.alloc_cpus}) w.put(c);
    w.put(j.mem_mb);
    w.put(static_cast<std::uint8_t>(j.mem_per_cpu | (j.exclusive << 1)));
    w.put(static_cast<std::uint8_t>(j.state));
    w.put(static_cast<std::uint8_t>(j.started_by));
    w.put(j.restarts);
    w.put(j.priority);
    w.put(j.nice);
    w.put(j.source_line);
    w.put(static_cast<std::uint16_t>(j.gres.size()));
    for (const auto& g : j.gres) {
      w.put(g.name);
      w.put(g.type);
      w.put(g.count);
      w.put(static_cast<std::uint8_t>(g.per_node));
    }
  }
  return seal_container(kMagic, kNativeTraceVersion, w.bytes());
}

Trace decode_native_trace(const std::string& bytes, const std::string& file) {
  std::uint32_t version = 0;
  const auto payload = open_container(bytes, kMagic, 1, kNativeTraceVersion, version, file, kWhat);
  ByteReader r(payload, file, kWhat);
  Trace t;
  t.origin = r.get<Seconds>();
  t.source = r.get_string();
  for (auto* d : {&t.users, &t.accounts, &t.partitions, &t.qos, &t.strings}) get(r, *d);
  const auto n = r.get<std::uint64_t>();
  // Each job takes at least kMinJobBytes of payload: a larger count is corruption, caught before
  // allocating for it.
  if (n > payload.size() / kMinJobBytes)
    throw InputError(file, 0, "", "native trace job count exceeds payload");
  t.jobs.resize(n);
  for (auto& j : t.jobs) {
    j.job_id = r.get<std::uint64_t>();
    j.array_task = r.get<std::int32_t>();
    j.het_component = r.get<std::int32_t>();
    for (auto* p : {&j.user, &j.account, &j.partition, &j.qos, &j.name, &j.constraints, &j.dependency})
      *p = r.get<NameIndex>();
    for (const auto& [index, dict] :
         {std::pair{j.user, &t.users}, std::pair{j.account, &t.accounts},
          std::pair{j.partition, &t.partitions}, std::pair{j.qos, &t.qos}, std::pair{j.name, &t.strings},
          std::pair{j.constraints, &t.strings}, std::pair{j.dependency, &t.strings}})
      if (index != kNoName && index >= dict->size())
        throw InputError(file, 0, "",
                         fmt::format("native trace job {} names entry {} of a {}-entry dictionary", j.job_id,
                                     index, dict->size()));
    for (auto* p : {&j.submit, &j.eligible, &j.start, &j.end, &j.runtime, &j.time_limit})
      *p = r.get<Seconds>();
    if (version >= 2) j.cancel = r.get<Seconds>();
    const auto string_entry = [&](NameIndex index, const char* what) {
      if (index != kNoName && index >= t.strings.size())
        throw InputError(file, 0, "",
                         fmt::format("native trace job {} names {} entry {} of a {}-entry dictionary",
                                     j.job_id, what, index, t.strings.size()));
      return index;
    };
    if (version >= 3) {
      j.reservation = string_entry(r.get<NameIndex>(), "reservation");
      j.reservation_id = r.get<std::uint32_t>();
    }
    if (version >= 4) j.array_max_running = r.get<std::uint32_t>();
    if (version >= 5) j.licenses = string_entry(r.get<NameIndex>(), "licences");
    for (auto* p : {&j.nodes, &j.tasks, &j.tasks_per_node, &j.cpus_per_task, &j.req_cpus, &j.alloc_cpus})
      *p = r.get<std::uint32_t>();
    j.mem_mb = r.get<std::int64_t>();
    const auto bits = r.get<std::uint8_t>();
    j.mem_per_cpu = bits & 1;
    j.exclusive = bits & 2;
    j.state = static_cast<JobState>(r.get<std::uint8_t>());
    j.started_by = static_cast<SchedulerPass>(r.get<std::uint8_t>());
    j.restarts = r.get<std::uint32_t>();
    j.priority = r.get<std::int64_t>();
    j.nice = r.get<std::int32_t>();
    j.source_line = r.get<std::uint64_t>();
    const auto ng = r.get<std::uint16_t>();
    j.gres.resize(ng);
    for (auto& g : j.gres) {
      g.name = r.get_string();
      g.type = r.get_string();
      g.count = r.get<std::int64_t>();
      g.per_node = r.get<std::uint8_t>() != 0;
    }
    if (j.state > JobState::kRevoked || j.started_by > SchedulerPass::kBackfill)
      throw InputError(file, 0, "state", "native trace holds an invalid enum value");
    if (const auto problem = record_limit_problem(j))
      throw InputError(file, 0, problem->field,
                       fmt::format("native trace job {}: {}", j.job_id, problem->detail));
  }
  if (!r.done()) throw InputError(file, 0, "", "native trace has unread bytes in its payload");
  return t;
}

void write_native_trace(const Trace& trace, const std::string& path) {
  write_file_atomic(path, encode_native_trace(trace));
}

Trace read_native_trace(const std::string& path) {
  return decode_native_trace(read_input_file(path), path);
}

}  // namespace slurmtwin
