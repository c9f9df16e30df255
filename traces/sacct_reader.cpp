// sacct --parsable2 (-P) reader. Real dumps are not clean '|'-separated tables: free-text fields
// (JobName, Constraints, SubmitLine, comments, paths) may contain unescaped '|' and newlines, and a
// dump may end in a truncated fragment. Records are rebuilt from physical lines (a short record
// continues on the following lines) and, when a record has more '|' tokens than columns, its tokens
// are aligned to the columns by a dynamic program in which structured columns take exactly one token
// of their shape and free-text columns take one or more.
#include <algorithm>
#include <array>
#include <cctype>
#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "traces/array_spec.hpp"
#include "traces/licenses.hpp"
#include "traces/read_report.hpp"
#include "traces/readers.hpp"
#include "traces/sacct_common.hpp"
#include "traces/site.hpp"
#include "traces/text.hpp"
#include "traces/time_format.hpp"

namespace slurmtwin {

namespace {

using sacct_detail::JobFolder;
using sacct_detail::JobKey;

// ---------------------------------------------------------------------------------------------------
// Column shapes

/// What a column's value looks like; free text (kText) is the only shape that may span several
/// '|' tokens.
enum class Shape : std::uint8_t {
  kAny,       // one token, anything
  kWord,      // one token without whitespace (names: Account, User, Partition, QOS, ...)
  kText,      // free text: one or more tokens, joined again with '|'
  kJobId,     // 123, 123_4, 123_[1-5%2], 123+1, each optionally .step; never empty
  kTime,      // ISO timestamp, Unknown, None or empty
  kDuration,  // [D-]HH:MM:SS, MM:SS.mmm, UNLIMITED, Partition_Limit, INVALID or empty
  kInt,       // optional sign and digits, or empty
  kLimitRaw,  // minutes, UNLIMITED, Partition_Limit or empty (TimelimitRaw)
  kSize,      // 12, 2.53M, 141309400K or empty
  kReqMem,    // 2800Mc, 550000Mn, 4000M, 0 or empty
  kExitCode,  // N:M or empty
  kState,     // COMPLETED, CANCELLED by 123, ...; never empty
  kTres,      // key=value,key=value or empty
  kFlags,     // SchedMain,StartReceived or empty
  kNodes,     // hostlist, "None assigned", "(null)" or empty
  kLayout,    // Block, Cyclic, Unknown, ... or empty
  kEmpty,     // the empty column after the trailing '|' of sacct -p (parsable, not parsable2)
};

struct ColumnSpec {
  std::string_view name;
  Shape shape;
};

// Every sacct --helpformat field (Slurm 17.11 .. 24.x). Unknown columns are taken as kAny.
constexpr ColumnSpec kColumnSpecs[] = {
    {"Account", Shape::kWord},
    {"AdminComment", Shape::kText},
    {"AllocCPUS", Shape::kInt},
    {"AllocGRES", Shape::kWord},
    {"AllocNodes", Shape::kInt},
    {"AllocTRES", Shape::kTres},
    {"AssocID", Shape::kInt},
    {"AveCPU", Shape::kDuration},
    {"AveCPUFreq", Shape::kSize},
    {"AveDiskRead", Shape::kSize},
    {"AveDiskWrite", Shape::kSize},
    {"AvePages", Shape::kSize},
    {"AveRSS", Shape::kSize},
    {"AveVMSize", Shape::kSize},
    {"BlockID", Shape::kAny},
    {"Cluster", Shape::kWord},
    {"Comment", Shape::kText},
    {"Constraints", Shape::kText},
    {"Container", Shape::kText},
    {"ConsumedEnergy", Shape::kSize},
    {"ConsumedEnergyRaw", Shape::kInt},
    {"CPUTime", Shape::kDuration},
    {"CPUTimeRAW", Shape::kInt},
    {"DBIndex", Shape::kInt},
    {"DerivedExitCode", Shape::kExitCode},
    {"Elapsed", Shape::kDuration},
    {"ElapsedRaw", Shape::kInt},
    {"Eligible", Shape::kTime},
    {"End", Shape::kTime},
    {"ExitCode", Shape::kExitCode},
    {"Extra", Shape::kText},
    {"FailedNode", Shape::kNodes},
    {"Flags", Shape::kFlags},
    {"GID", Shape::kInt},
    {"Group", Shape::kWord},
    {"HetJobID", Shape::kInt},
    {"HetJobOffset", Shape::kInt},
    {"JobID", Shape::kJobId},
    {"JobIDRaw", Shape::kJobId},
    {"JobName", Shape::kText},
    {"Layout", Shape::kLayout},
    {"Licenses", Shape::kWord},
    {"MaxDiskRead", Shape::kSize},
    {"MaxDiskReadNode", Shape::kNodes},
    {"MaxDiskReadTask", Shape::kInt},
    {"MaxDiskWrite", Shape::kSize},
    {"MaxDiskWriteNode", Shape::kNodes},
    {"MaxDiskWriteTask", Shape::kInt},
    {"MaxPages", Shape::kSize},
    {"MaxPagesNode", Shape::kNodes},
    {"MaxPagesTask", Shape::kInt},
    {"MaxRSS", Shape::kSize},
    {"MaxRSSNode", Shape::kNodes},
    {"MaxRSSTask", Shape::kInt},
    {"MaxVMSize", Shape::kSize},
    {"MaxVMSizeNode", Shape::kNodes},
    {"MaxVMSizeTask", Shape::kInt},
    {"McsLabel", Shape::kAny},
    {"MinCPU", Shape::kDuration},
    {"MinCPUNode", Shape::kNodes},
    {"MinCPUTask", Shape::kInt},
    {"NCPUS", Shape::kInt},
    {"NNodes", Shape::kInt},
    {"NodeList", Shape::kNodes},
    {"NTasks", Shape::kInt},
    {"Partition", Shape::kWord},
    {"Planned", Shape::kDuration},
    {"PlannedCPU", Shape::kDuration},
    {"PlannedCPURAW", Shape::kInt},
    {"Priority", Shape::kInt},
    {"QOS", Shape::kWord},
    {"QOSRAW", Shape::kInt},
    {"QOSREQ", Shape::kWord},
    {"Reason", Shape::kAny},
    {"ReqCPUFreq", Shape::kWord},
    {"ReqCPUFreqGov", Shape::kWord},
    {"ReqCPUFreqMax", Shape::kWord},
    {"ReqCPUFreqMin", Shape::kWord},
    {"ReqCPUS", Shape::kInt},
    {"ReqGRES", Shape::kWord},
    {"ReqMem", Shape::kReqMem},
    {"ReqNodes", Shape::kInt},
    {"ReqTRES", Shape::kTres},
    {"Reservation", Shape::kWord},
    {"ReservationId", Shape::kInt},
    {"Reserved", Shape::kDuration},
    {"ResvCPU", Shape::kDuration},
    {"ResvCPURAW", Shape::kInt},
    {"Restarts", Shape::kInt},
    {"Start", Shape::kTime},
    {"State", Shape::kState},
    {"StdErr", Shape::kText},
    {"StdIn", Shape::kText},
    {"StdOut", Shape::kText},
    {"Submit", Shape::kTime},
    {"SubmitLine", Shape::kText},
    {"Suspended", Shape::kDuration},
    {"SystemComment", Shape::kText},
    {"SystemCPU", Shape::kDuration},
    {"Timelimit", Shape::kDuration},
    {"TimelimitRaw", Shape::kLimitRaw},
    {"TotalCPU", Shape::kDuration},
    {"UID", Shape::kInt},
    {"User", Shape::kWord},
    {"UserCPU", Shape::kDuration},
    {"WCKey", Shape::kWord},
    {"WCKeyID", Shape::kInt},
    {"WorkDir", Shape::kText},
};

/// Shape of a header name (case-insensitive); nullopt for a column sacct does not have.
std::optional<Shape> known_shape(std::string_view name) {
  for (const auto& c : kColumnSpecs) {
    if (text::iequals(c.name, name)) return c.shape;
  }
  if (text::starts_with_i(name, "TRESUsage")) return Shape::kTres;  // TRESUsageIn/Out Ave/Max/Min/Tot...
  return std::nullopt;
}

bool is_digit(char c) {
  return c >= '0' && c <= '9';
}
bool all_digits(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), is_digit);
}
bool has_space(std::string_view s) {
  return std::any_of(s.begin(), s.end(), [](char c) { return std::isspace(static_cast<unsigned char>(c)); });
}

/// "12", "2.53" followed by at most one unit letter.
bool is_number_with_unit(std::string_view s, std::string_view units) {
  if (!s.empty() && units.find(static_cast<char>(std::toupper(static_cast<unsigned char>(s.back())))) !=
                        std::string_view::npos)
    s.remove_suffix(1);
  const auto dot = s.find('.');
  if (dot == std::string_view::npos) return all_digits(s);
  return all_digits(s.substr(0, dot)) && all_digits(s.substr(dot + 1));
}

bool matches(Shape shape, std::string_view t) {
  switch (shape) {
    case Shape::kAny:
    case Shape::kText:
      return true;
    case Shape::kWord:
      return !has_space(t);
    case Shape::kEmpty:
      return t.empty();
    case Shape::kJobId:
      return sacct_detail::parse_sacct_job_id(t).has_value();
    case Shape::kTime:
      return parse_timestamp(t).has_value();
    case Shape::kDuration:
      if (t.empty() || t == "INVALID") return true;
      // sacct always prints durations with ':' (a bare number would be read as minutes)
      if (t.find(':') == std::string_view::npos && !text::iequals(t, "UNLIMITED") &&
          !text::iequals(t, "Partition_Limit"))
        return false;
      return parse_slurm_duration(t).has_value();
    case Shape::kInt:
      if (!t.empty() && t.front() == '-') t.remove_prefix(1);
      return t.empty() || all_digits(t);
    case Shape::kLimitRaw:
      return t.empty() || all_digits(t) || text::iequals(t, "UNLIMITED") ||
             text::iequals(t, "Partition_Limit");
    case Shape::kSize:
      return t.empty() || is_number_with_unit(t, "KMGTPE");
    case Shape::kReqMem:
      if (t.empty()) return true;
      if (t.back() == 'c' || t.back() == 'n') t.remove_suffix(1);
      return is_number_with_unit(t, "KMGTP");
    case Shape::kExitCode: {
      if (t.empty()) return true;
      const auto colon = t.find(':');
      return colon != std::string_view::npos && all_digits(t.substr(0, colon)) &&
             all_digits(t.substr(colon + 1));
    }
    case Shape::kState: {
      std::size_t i = 0;
      while (i < t.size() && (std::isalpha(static_cast<unsigned char>(t[i])) || t[i] == '_')) ++i;
      if (i == 0) return false;
      if (i < t.size() && t[i] == '+') ++i;
      const auto rest = t.substr(i);
      return rest.empty() || (rest.size() > 4 && rest.substr(0, 4) == " by " && all_digits(rest.substr(4)));
    }
    case Shape::kTres:
      if (t.empty()) return true;
      for (auto item : text::split(t, ',')) {
        const auto eq = item.find('=');
        if (eq == 0 || eq == std::string_view::npos || eq + 1 == item.size() || has_space(item)) return false;
      }
      return true;
    case Shape::kFlags:
      return std::all_of(t.begin(), t.end(), [](char c) {
        return std::isalpha(static_cast<unsigned char>(c)) || c == '_' || c == ',';
      });
    case Shape::kNodes:
      if (t == "None assigned" || t == "(null)") return true;
      return std::all_of(t.begin(), t.end(), [](char c) {
        return std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-' || c == '[' ||
               c == ']' || c == ',' || c == ':';
      });
    case Shape::kLayout:
      return std::all_of(t.begin(), t.end(),
                         [](char c) { return std::isalpha(static_cast<unsigned char>(c)); });
  }
  return false;
}

// ---------------------------------------------------------------------------------------------------
// Aligning '|' tokens to columns

/// Most extra '|' tokens one record may carry; beyond this the record is rejected (bounds the DP).
constexpr std::size_t kMaxExtraTokens = 512;

struct Alignment {
  enum class Result : std::uint8_t { kUnique, kAmbiguous, kNone } result = Result::kNone;
  std::vector<std::size_t> first;  // first token of each column (size C + 1; last = token count)
};

/// Aligns `tokens` (at least as many as columns) to the column shapes: structured columns take one
/// token of their shape, free-text columns one or more. Among all alignments the one with the fewest
/// merged free-text groups that begin or end with an empty token wins (each empty end costs 1: an
/// unescaped '|' next to a real field separator is the unlikely case); a tie at the minimum is
/// ambiguous.
Alignment align_tokens(const std::vector<Shape>& shapes, const std::vector<std::string_view>& tokens) {
  Alignment out;
  const std::size_t cols = shapes.size();
  if (tokens.size() < cols) return out;
  const std::size_t extra = tokens.size() - cols;
  if (extra > kMaxExtraTokens) return out;
  const std::size_t width = extra + 1;
  constexpr std::uint32_t kInf = std::numeric_limits<std::uint32_t>::max();
  // State (i, d): the first i columns consumed i + d tokens.
  std::vector<std::uint32_t> cost((cols + 1) * width, kInf);
  std::vector<std::uint8_t> count((cols + 1) * width, 0);  // alignments at that cost, saturating at 2
  std::vector<std::uint32_t> from((cols + 1) * width, 0);  // predecessor offset d
  cost[0] = 0;
  count[0] = 1;
  const auto relax = [&](std::size_t i, std::size_t d, std::uint32_t c, std::uint8_t n, std::size_t prev) {
    auto& cur = cost[i * width + d];
    auto& cnt = count[i * width + d];
    if (c < cur) {
      cur = c;
      cnt = n;
      from[i * width + d] = static_cast<std::uint32_t>(prev);
    } else if (c == cur) {
      cnt = static_cast<std::uint8_t>(std::min(2, cnt + n));
    }
  };
  for (std::size_t i = 0; i < cols; ++i) {
    for (std::size_t d = 0; d < width; ++d) {
      const auto c = cost[i * width + d];
      if (c == kInf) continue;
      const auto n = count[i * width + d];
      const std::size_t j = i + d;
      if (shapes[i] != Shape::kText) {
        if (matches(shapes[i], tokens[j])) relax(i + 1, d, c, n, d);
        continue;
      }
      for (std::size_t k = 1; d + k - 1 < width; ++k) {
        std::uint32_t extra_cost = 0;
        if (k >= 2) extra_cost = (tokens[j].empty() ? 1u : 0u) + (tokens[j + k - 1].empty() ? 1u : 0u);
        relax(i + 1, d + k - 1, c + extra_cost, n, d);
      }
    }
  }
  const auto last = cols * width + extra;
  if (cost[last] == kInf) return out;
  out.result = count[last] == 1 ? Alignment::Result::kUnique : Alignment::Result::kAmbiguous;
  out.first.assign(cols + 1, 0);
  out.first[cols] = tokens.size();
  std::size_t d = extra;
  for (std::size_t i = cols; i > 0; --i) {
    const std::size_t prev = from[i * width + d];
    out.first[i - 1] = (i - 1) + prev;
    d = prev;
  }
  return out;
}

// ---------------------------------------------------------------------------------------------------
// Fields used to build a JobRecord

enum Field : std::uint8_t {
  kJobID,
  kJobIDRaw,
  kUser,
  kAccount,
  kPartition,
  kQOS,
  kSubmit,
  kEligible,
  kStart,
  kEnd,
  kElapsed,
  kElapsedRaw,
  kTimelimit,
  kTimelimitRaw,
  kNNodes,
  kReqNodes,
  kNCPUS,
  kAllocCPUS,
  kReqCPUS,
  kNTasks,
  kReqMem,
  kReqTRES,
  kAllocTRES,
  kReqGRES,
  kConstraints,
  kState,
  kFlags,
  kRestarts,
  kPriority,
  kJobName,
  kReservation,
  kReservationId,
  kSubmitLine,
  kLicenses,
  kFieldCount
};
constexpr std::array<std::string_view, kFieldCount> kFieldNames = {
    "JobID",    "JobIDRaw",  "User",        "Account",       "Partition",  "QOS",       "Submit",
    "Eligible", "Start",     "End",         "Elapsed",       "ElapsedRaw", "Timelimit", "TimelimitRaw",
    "NNodes",   "ReqNodes",  "NCPUS",       "AllocCPUS",     "ReqCPUS",    "NTasks",    "ReqMem",
    "ReqTRES",  "AllocTRES", "ReqGRES",     "Constraints",   "State",      "Flags",     "Restarts",
    "Priority", "JobName",   "Reservation", "ReservationId", "SubmitLine", "Licenses"};

/// A bad value in one field of a record (turned into a rejection "bad <field>").
struct BadField {
  std::string field;
  std::string detail;
};

// The value of `option` at words[i] ("--cpus-per-task=4", "--cpus-per-task 4", "-c4", "-c 4"), moving
// i past a separate value; nullopt when words[i] is not that option.
std::optional<std::string_view> option_value(const std::vector<std::string_view>& words,
                                             std::string_view option, std::size_t& i) {
  const auto w = words[i];
  if (w == option) {
    if (i + 1 >= words.size()) return std::nullopt;
    return words[++i];
  }
  if (w.starts_with(option) && w.size() > option.size() && (w[option.size()] == '=' || option.size() == 2))
    return w.substr(option.size() + (w[option.size()] == '=' ? 1 : 0));
  return std::nullopt;
}

// The N of an --array spec's "%N" (at most N tasks run at once), 0 without one. A spec sbatch would
// refuse throws BadField where the option surely is --array (`required`); elsewhere (a glued "-aX",
// which may be a script argument) it gives nullopt.
std::optional<std::uint32_t> array_task_cap(std::string_view spec, std::string_view line, bool required) {
  const auto parsed = parse_array_spec(spec);
  if (parsed) return parsed->max_running;
  if (required)
    throw BadField{"SubmitLine", fmt::format("bad SubmitLine '{}': bad --array '{}'", line, spec)};
  return std::nullopt;
}

/// The sbatch options sacct has no column for, from SubmitLine ("sbatch --exclusive -c 4 job.sh"):
/// --exclusive (the node-exclusive form, not =user/=mcs/=topo), --ntasks-per-node, --cpus-per-task /
/// -c, the task cap of --array / -a ("0-9%2": at most 2 tasks at once) and --licenses / -L (interned in
/// `strings`). Options given in the script's #SBATCH lines are not in SubmitLine; a script argument spelt
/// like one of these options would be read as it. Throws BadField on a bad count.
void read_submit_line(std::string_view line, JobRecord& j, NameDictionary& strings) {
  const auto words = text::split_ws(line);
  const auto count = [&](std::string_view option, std::size_t& i) -> std::optional<std::uint32_t> {
    const auto value = option_value(words, option, i);
    if (!value) return std::nullopt;
    const auto n = text::parse_int(*value);
    if (!n || *n < 1 || *n > 1'000'000)
      throw BadField{"SubmitLine", fmt::format("bad SubmitLine '{}': {} needs a count", line, option)};
    return static_cast<std::uint32_t>(*n);
  };
  for (std::size_t i = 0; i < words.size(); ++i) {
    if (words[i] == "--exclusive") {
      j.exclusive = true;
    } else if (const auto n = count("--ntasks-per-node", i)) {
      j.tasks_per_node = *n;
    } else if (const auto c = count("--cpus-per-task", i)) {
      j.cpus_per_task = *c;
    } else if (const auto c2 = count("-c", i)) {
      j.cpus_per_task = *c2;
    } else if (const auto lic = option_value(words, "--licenses", i)) {
      j.licenses = strings.intern(*lic);
    } else if (const auto lic2 = option_value(words, "-L", i)) {
      j.licenses = strings.intern(*lic2);
    } else if (const auto spec = option_value(words, "--array", i)) {
      j.array_max_running = *array_task_cap(*spec, line, true);
    } else if (const bool separate = words[i] == "-a"; const auto a = option_value(words, "-a", i)) {
      if (const auto cap = array_task_cap(*a, line, separate)) j.array_max_running = *cap;
    }
  }
}

class RecordView {
 public:
  RecordView(const std::array<int, kFieldCount>& index, const std::vector<std::string>& values)
      : index_(index), values_(values) {}
  bool has_column(Field f) const { return index_[f] >= 0; }
  /// The raw value, or nullopt when the column is absent or (after trimming) empty.
  std::optional<std::string_view> get(Field f) const {
    if (index_[f] < 0) return std::nullopt;
    const std::string_view v = values_[static_cast<std::size_t>(index_[f])];
    if (text::trim(v).empty()) return std::nullopt;
    return v;
  }
  [[noreturn]] static void bad(Field f, std::string_view value, std::string_view why = "") {
    throw BadField{std::string(kFieldNames[f]),
                   fmt::format("bad {} '{}'{}{}", kFieldNames[f], value, why.empty() ? "" : ": ", why)};
  }
  std::optional<std::int64_t> integer(Field f, std::int64_t min = 0,
                                      std::int64_t max = std::numeric_limits<std::int64_t>::max()) const {
    const auto v = get(f);
    if (!v) return std::nullopt;
    const auto n = text::parse_int(*v);
    if (!n || *n < min || *n > max) bad(f, *v);
    return n;
  }
  std::optional<Seconds> time(Field f) const {
    const auto v = get(f);
    if (!v) return std::nullopt;
    const auto t = parse_timestamp(text::trim(*v));
    if (!t) bad(f, *v);
    return *t == kUnsetTime ? std::nullopt : t;
  }
  std::optional<Seconds> duration(Field f) const {
    const auto v = get(f);
    if (!v) return std::nullopt;
    const auto t = parse_slurm_duration(text::trim(*v));
    if (!t) bad(f, *v);
    return t;
  }

 private:
  const std::array<int, kFieldCount>& index_;
  const std::vector<std::string>& values_;
};

std::uint32_t to_u32(std::int64_t v) {
  return static_cast<std::uint32_t>(v);
}
constexpr std::int64_t kMaxU32 = std::numeric_limits<std::uint32_t>::max();

/// GRES requests of a TRES string: "gres/gpu=2,gres/gpu:v100=2" -> {gpu, v100, 2} (typed entries win
/// over the untyped total of the same name). ReqTRES counts are per job.
std::vector<GresRequest> gres_from_tres(std::string_view tres) {
  std::vector<GresRequest> typed, untyped;
  for (auto item : text::split(tres, ',')) {
    item = text::trim(item);
    if (!text::starts_with_i(item, "gres/")) continue;
    const auto eq = item.find('=');
    if (eq == std::string_view::npos) continue;
    const auto key = item.substr(5, eq - 5);
    const auto count = text::parse_int(item.substr(eq + 1));
    if (!count || *count <= 0) continue;
    GresRequest g;
    const auto colon = key.find(':');
    g.name = std::string(key.substr(0, colon));
    if (colon != std::string_view::npos) g.type = std::string(key.substr(colon + 1));
    g.count = *count;
    g.per_node = false;
    (g.type.empty() ? untyped : typed).push_back(std::move(g));
  }
  for (auto& g : untyped) {
    const bool has_typed =
        std::any_of(typed.begin(), typed.end(), [&](const GresRequest& t) { return t.name == g.name; });
    if (!has_typed) typed.push_back(std::move(g));
  }
  return typed;
}

/// Old --gres form of ReqGRES/AllocGRES: "gpu:2", "gpu:v100:2", "gpu" (per node).
std::vector<GresRequest> gres_from_req_gres(std::string_view spec) {
  std::vector<GresRequest> out;
  for (auto item : text::split(spec, ',')) {
    item = text::trim(item);
    if (item.empty()) continue;
    if (const auto paren = item.find('('); paren != std::string_view::npos) item = item.substr(0, paren);
    const auto parts = text::split(item, ':');
    GresRequest g;
    g.name = std::string(parts[0]);
    g.count = 1;
    if (parts.size() >= 2) {
      if (const auto n = text::parse_int(parts.back()); n) {
        g.count = *n;
        if (parts.size() >= 3) g.type = std::string(parts[1]);
      } else {
        g.type = std::string(parts[1]);
      }
    }
    if (g.count > 0 && !g.name.empty()) out.push_back(std::move(g));
  }
  return out;
}

TresMap tres_counts(const RecordView& r, Field f) {
  const auto v = r.get(f);
  if (!v) return {};
  try {
    return parse_tres_counts(*v);
  } catch (const std::invalid_argument& e) {
    RecordView::bad(f, *v, e.what());
  }
}

std::optional<std::int64_t> tres_value(const TresMap& m, const char* key) {
  const auto it = m.find(key);
  if (it == m.end()) return std::nullopt;
  return it->second;
}

/// The job's licences: the Licenses column (sacct 23.02 on), else the submit line's -L (already in
/// `j`), else ReqTRES's license/NAME=N (a site that tracks them: AccountingStorageTRES=license/NAME).
void read_licenses(const RecordView& r, Trace& trace, JobRecord& j) {
  if (const auto v = r.get(kLicenses); v && text::trim(*v) != "(null)")
    j.licenses = trace.strings.intern(text::trim(*v));
  if (j.licenses == kNoName)
    if (const auto v = r.get(kReqTRES)) {
      std::string spec;  // names as given: slurmctld compares them case-sensitively
      for (auto item : text::split(*v, ',')) {
        item = text::trim(item);
        const auto eq = item.find('=');
        if (!item.starts_with("license/") || eq == std::string_view::npos) continue;
        spec += fmt::format("{}{}:{}", spec.empty() ? "" : ",", item.substr(8, eq - 8), item.substr(eq + 1));
      }
      if (!spec.empty()) j.licenses = trace.strings.intern(spec);
    }
  if (j.licenses == kNoName) return;
  try {
    parse_licenses(trace.strings.name(j.licenses));
  } catch (const std::invalid_argument& e) {
    RecordView::bad(kLicenses, trace.strings.name(j.licenses), e.what());
  }
}

/// Fills `j` from the fields of one (non-step) record; throws BadField.
void fill_job(const RecordView& r, Trace& trace, JobRecord& j, bool pending_array) {
  if (const auto v = r.get(kUser)) j.user = trace.users.intern(text::trim(*v));
  if (const auto v = r.get(kAccount)) j.account = trace.accounts.intern(text::trim(*v));
  if (const auto v = r.get(kPartition)) j.partition = trace.partitions.intern(text::trim(*v));
  if (const auto v = r.get(kQOS)) j.qos = trace.qos.intern(text::trim(*v));
  if (const auto v = r.get(kJobName)) j.name = trace.strings.intern(*v);
  if (const auto v = r.get(kConstraints)) j.constraints = trace.strings.intern(*v);
  if (const auto v = r.get(kReservation); v && !text::trim(*v).empty())
    j.reservation = trace.strings.intern(text::trim(*v));
  if (const auto id = r.integer(kReservationId, 0, kMaxU32)) j.reservation_id = to_u32(*id);
  if (const auto v = r.get(kSubmitLine)) read_submit_line(*v, j, trace.strings);

  j.submit = r.time(kSubmit).value_or(kUnsetTime);
  j.eligible = r.time(kEligible).value_or(kUnsetTime);
  j.start = r.time(kStart).value_or(kUnsetTime);
  j.end = r.time(kEnd).value_or(kUnsetTime);

  // Run time: ElapsedRaw (s), else Elapsed, else End - Start; a job that never started has none.
  std::optional<Seconds> elapsed;
  if (const auto raw = r.integer(kElapsedRaw)) elapsed = *raw;
  if (!elapsed) elapsed = r.duration(kElapsed);
  if (elapsed && (*elapsed == kUnlimited || *elapsed == kUnsetTime)) r.bad(kElapsed, *r.get(kElapsed));
  if (!elapsed && j.start != kUnsetTime && j.end != kUnsetTime && j.end >= j.start) elapsed = j.end - j.start;
  if (j.start != kUnsetTime && elapsed) j.runtime = *elapsed;

  // Time limit: Timelimit ([D-]HH:MM:SS), else TimelimitRaw (minutes).
  if (const auto v = r.get(kTimelimit)) {
    const auto t = parse_slurm_duration(text::trim(*v));
    if (!t) r.bad(kTimelimit, *v);
    j.time_limit = *t;
  } else if (const auto raw = r.get(kTimelimitRaw)) {
    const auto t = text::trim(*raw);
    if (text::iequals(t, "UNLIMITED")) {
      j.time_limit = kUnlimited;
    } else if (text::iequals(t, "Partition_Limit")) {
      j.time_limit = kUnsetTime;
    } else {
      const auto minutes = text::parse_int(t);
      if (!minutes || *minutes < 0 || *minutes > kMaxU32) r.bad(kTimelimitRaw, *raw);
      j.time_limit = *minutes * 60;
    }
  }

  const auto req_tres = tres_counts(r, kReqTRES);
  const auto alloc_tres = tres_counts(r, kAllocTRES);

  if (r.has_column(kReqNodes)) {
    // ReqNodes is -N (sacct always fills it; SlurmTwin's own jobs.sacct leaves it empty when no -N was
    // given, so the job may spread over as many nodes as it likes, as it first did).
    const auto n = r.integer(kReqNodes, 0, kMaxU32);
    j.nodes = n ? to_u32(*n) : 0;
    // sacct shows ReqNodes=1 for a job that gave no -N; one that got more nodes than that gave none.
    if (const auto got = r.integer(kNNodes, 0, kMaxU32); j.nodes == 1 && got && *got > 1) j.nodes = 0;
  } else if (const auto nn = r.integer(kNNodes, 0, kMaxU32); nn && *nn > 0) {
    j.nodes = to_u32(*nn);
  } else if (const auto t = tres_value(req_tres, "node"); t && *t <= kMaxU32) {
    j.nodes = to_u32(*t);
  } else if (const auto a = tres_value(alloc_tres, "node"); a && *a <= kMaxU32) {
    j.nodes = to_u32(*a);
  }

  if (const auto n = r.integer(kNCPUS, 0, kMaxU32)) {
    j.alloc_cpus = to_u32(*n);
  } else if (const auto a = r.integer(kAllocCPUS, 0, kMaxU32)) {
    j.alloc_cpus = to_u32(*a);
  } else if (const auto t = tres_value(alloc_tres, "cpu"); t && *t <= kMaxU32) {
    j.alloc_cpus = to_u32(*t);
  }
  if (const auto n = r.integer(kReqCPUS, 0, kMaxU32)) {
    j.req_cpus = to_u32(*n);
  } else if (const auto t = tres_value(req_tres, "cpu"); t && *t <= kMaxU32) {
    j.req_cpus = to_u32(*t);
  }
  if (const auto n = r.integer(kNTasks, 1, kMaxU32)) j.tasks = to_u32(*n);

  // ReqMem: "2800Mc" per CPU, "550000Mn" per node (Slurm <= 21.08); a bare "4000M" (Slurm >= 21.08)
  // is the job's mem TRES, i.e. the whole job's memory (sacct prints the tres_req_str mem count), so
  // it is spread over the requested nodes. "0" = all the memory of each node.
  std::optional<std::int64_t> job_total_mem;
  if (const auto v = r.get(kReqMem)) {
    auto m = text::trim(*v);
    char kind = '\0';
    if (!m.empty() && (m.back() == 'c' || m.back() == 'n')) {
      kind = m.back();
      m.remove_suffix(1);
    }
    const auto mb = text::parse_memory_mb(m);
    if (!mb) r.bad(kReqMem, *v);
    if (kind == 'c') {
      j.mem_mb = *mb;
      j.mem_per_cpu = true;
    } else if (kind == 'n' || *mb == 0) {
      j.mem_mb = *mb;
    } else {
      job_total_mem = *mb;
    }
  } else if (const auto t = tres_value(req_tres, "mem")) {
    job_total_mem = *t;
  }
  if (job_total_mem) {
    const std::int64_t nodes = std::max<std::int64_t>(1, j.nodes);
    j.mem_mb = (*job_total_mem + nodes - 1) / nodes;
  }

  j.gres = gres_from_tres(r.get(kReqTRES).value_or(""));
  if (j.gres.empty()) {
    if (const auto v = r.get(kReqGRES)) j.gres = gres_from_req_gres(*v);
  }
  read_licenses(r, trace, j);

  if (const auto v = r.get(kState)) {
    try {
      j.state = parse_job_state(*v);
    } catch (const std::invalid_argument&) {
      r.bad(kState, *v);
    }
  } else if (pending_array) {
    j.state = JobState::kPending;
  }
  note_cancel_before_start(j);

  if (const auto v = r.get(kFlags)) {
    for (auto flag : text::split(*v, ',')) {
      flag = text::trim(flag);
      if (text::iequals(flag, "SchedSubmit")) j.started_by = SchedulerPass::kSubmit;
      if (text::iequals(flag, "SchedMain")) j.started_by = SchedulerPass::kMain;
      if (text::iequals(flag, "SchedBackfill")) j.started_by = SchedulerPass::kBackfill;
    }
  }
  if (const auto n = r.integer(kRestarts, 0, kMaxU32)) j.restarts = to_u32(*n);
  if (const auto n = r.integer(kPriority, 0)) j.priority = *n;
}

// ---------------------------------------------------------------------------------------------------
// Lines and records

/// Physical lines of `content` ('\n' separated, a trailing '\r' dropped; no empty last line).
std::vector<std::string_view> physical_lines(std::string_view content) {
  auto lines = text::split(content, '\n');
  if (!lines.empty() && lines.back().empty()) lines.pop_back();
  for (auto& l : lines) {
    if (!l.empty() && l.back() == '\r') l.remove_suffix(1);
  }
  return lines;
}

bool looks_binary(std::string_view content) {
  std::size_t control = 0;
  for (const char ch : content) {
    const auto c = static_cast<unsigned char>(ch);
    if (c == 0) return true;
    if ((c < 0x20 && c != '\n' && c != '\r' && c != '\t') || c == 0x7f) ++control;
  }
  return control * 100 > content.size();
}

std::string column_name(std::string_view spec) {
  auto name = text::trim(spec);
  if (const auto pct = name.find('%'); pct != std::string_view::npos)
    name = name.substr(0, pct);  // JobName%30
  return std::string(text::trim(name));
}

}  // namespace

void read_sacct_parsable(std::string_view content, const std::string& file, Trace& trace, RejectSink& sink,
                         std::string_view columns) {
  auto& report = sink.report();
  if (report.file.empty()) report.file = file;
  if (content.size() >= 3 && content.substr(0, 3) == "\xEF\xBB\xBF") content.remove_prefix(3);  // UTF-8 BOM
  if (text::trim(content).empty()) throw InputError(file, 0, "", "empty file: no sacct --parsable2 output");
  if (looks_binary(content)) throw InputError(file, 0, "", "binary data, not sacct --parsable2 output");

  const auto lines = physical_lines(content);
  std::size_t next = 0;  // index of the next physical line to read
  while (next < lines.size() && text::trim(lines[next]).empty()) ++next;

  // Header: the first line, or `columns` (a --format list) for output printed with -n/--noheader.
  std::vector<std::string> names;
  std::uint64_t header_line = 0;
  if (columns.empty()) {
    for (const auto t : text::split(lines[next], '|')) names.push_back(column_name(t));
    header_line = next + 1;
    ++next;
  } else {
    for (const auto t : text::split(columns, ',')) names.push_back(column_name(t));
    // Output that has its header anyway: skip it.
    const auto first = text::split(lines[next], '|');
    if (first.size() >= names.size() &&
        std::equal(names.begin(), names.end(), first.begin(), [](const std::string& a, std::string_view b) {
          return text::iequals(a, text::trim(b));
        })) {
      header_line = next + 1;
      ++next;
    }
  }
  // sacct -p (not -P) ends every line with '|': an always-empty last column.
  bool trailing_pipe = false;
  if (names.size() > 1 && names.back().empty()) trailing_pipe = true;

  std::vector<Shape> shapes;
  std::array<int, kFieldCount> index;
  index.fill(-1);
  std::size_t known = 0;
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (trailing_pipe && i + 1 == names.size()) {
      shapes.push_back(Shape::kEmpty);
      continue;
    }
    const auto shape = known_shape(names[i]);
    if (shape) ++known;
    shapes.push_back(shape.value_or(Shape::kAny));
    for (std::size_t f = 0; f < kFieldCount; ++f) {
      if (index[f] < 0 && text::iequals(kFieldNames[f], names[i])) index[f] = static_cast<int>(i);
    }
  }
  const std::string where = columns.empty() ? "header" : "columns";
  if (known == 0) {
    throw InputError(file, header_line, where,
                     fmt::format("no known sacct column in '{}': not sacct --parsable2 output",
                                 columns.empty() ? std::string(lines[header_line - 1].substr(0, 200))
                                                 : std::string(columns)));
  }
  if (index[kJobID] < 0 && index[kJobIDRaw] < 0)
    throw InputError(file, header_line, where, "no JobID or JobIDRaw column");
  {
    auto& missing = sink.report().missing_columns;
    const auto need = [&](std::initializer_list<Field> any_of, const char* name) {
      if (std::none_of(any_of.begin(), any_of.end(), [&](Field f) { return index[f] >= 0; }))
        missing.emplace_back(name);
    };
    need({kUser}, "User");
    need({kSubmit}, "Submit");
    need({kStart}, "Start");
    need({kEnd, kElapsed, kElapsedRaw}, "End");
    need({kTimelimit, kTimelimitRaw}, "Timelimit");
  }

  const std::size_t ncols = shapes.size();
  const auto tokens_of = [](std::string_view s) { return text::split(s, '|'); };
  // A physical line that is by itself a whole record (used to decide whether a short record continues).
  const auto is_complete_record = [&](std::string_view line) {
    const auto toks = tokens_of(line);
    return toks.size() >= ncols && align_tokens(shapes, toks).result != Alignment::Result::kNone;
  };

  JobFolder folder(trace, sink);
  std::map<std::uint64_t, std::uint32_t> array_caps;  // array job id -> %N of its pending remnant
  std::string record;
  std::vector<std::string> values;
  while (next < lines.size()) {
    if (text::trim(lines[next]).empty()) {  // blank lines between records are not records
      ++next;
      continue;
    }
    const std::uint64_t line_no = next + 1;
    record.assign(lines[next]);
    ++next;
    auto toks_count = tokens_of(record).size();
    // A record with too few fields continues on the next physical line (a newline inside SubmitLine,
    // a comment, ...) unless that line is a record of its own.
    while (toks_count < ncols && next < lines.size() && !is_complete_record(lines[next])) {
      record += '\n';
      record += lines[next];
      toks_count += static_cast<std::size_t>(std::count(lines[next].begin(), lines[next].end(), '|'));
      ++next;
    }
    ++report.records;
    const auto tokens = tokens_of(record);
    if (tokens.size() < ncols) {
      sink.reject(
          line_no, "record", "truncated record",
          fmt::format("{} of {} fields before the next record or the end of the file", tokens.size(), ncols),
          record);
      continue;
    }
    values.assign(ncols, std::string());
    if (tokens.size() == ncols) {
      for (std::size_t i = 0; i < ncols; ++i) values[i] = std::string(tokens[i]);
    } else {
      const auto a = align_tokens(shapes, tokens);
      if (a.result == Alignment::Result::kNone) {
        sink.reject(line_no, "record", "too many fields",
                    fmt::format("{} fields for {} columns and no way to read the extra '|' as part of a "
                                "free-text field",
                                tokens.size(), ncols),
                    record);
        continue;
      }
      if (a.result == Alignment::Result::kAmbiguous) {
        sink.reject(line_no, "record", "ambiguous '|' in free-text field",
                    fmt::format("{} fields for {} columns: the extra '|' fit more than one free-text field",
                                tokens.size(), ncols),
                    record);
        continue;
      }
      for (std::size_t i = 0; i < ncols; ++i) {
        std::string v;
        for (std::size_t t = a.first[i]; t < a.first[i + 1]; ++t) {
          if (t > a.first[i]) v += '|';
          v += tokens[t];
        }
        values[i] = std::move(v);
      }
    }

    RecordView view(index, values);
    const Field id_field = view.get(kJobID) ? kJobID : kJobIDRaw;
    const auto id_text = view.get(id_field);
    if (!id_text) {
      sink.reject(line_no, std::string(kFieldNames[id_field]), "bad JobID", "the record has no job id",
                  record);
      continue;
    }
    const auto id = sacct_detail::parse_sacct_job_id(text::trim(*id_text));
    if (!id) {
      sink.reject(line_no, std::string(kFieldNames[id_field]), "bad JobID",
                  fmt::format("bad {} '{}'", kFieldNames[id_field], *id_text), record);
      continue;
    }
    const JobKey key{id->job_id, id->array_task, id->het_component};
    if (!id->step.empty()) {  // job steps (.batch, .extern, .0, ...) fold into their job
      folder.add_step(key, line_no, std::string(kFieldNames[id_field]), record);
      continue;
    }
    // A pending array remnant ("123_[5-10%2]") is one record for all its not yet started tasks: it
    // is kept as one pending job (array_task -1), not expanded into one job per task. Its %N is the
    // cap of the whole array: the tasks that ran carry it only in a SubmitLine given on the command line.
    if (id->array_max_running > 0) array_caps[id->job_id] = id->array_max_running;
    JobRecord job;
    job.job_id = id->job_id;
    job.array_task = id->array_task;
    job.het_component = id->het_component;
    job.source_line = line_no;
    try {
      fill_job(view, trace, job, id->pending_array);
    } catch (const BadField& e) {
      folder.note_rejected(key);
      sink.reject(line_no, e.field, "bad " + e.field, e.detail, record);
      continue;
    }
    folder.add_job(std::move(job));
  }
  folder.finish();
  for (auto& j : trace.jobs)
    if (const auto cap = array_caps.find(j.job_id); cap != array_caps.end() && j.array_max_running == 0)
      j.array_max_running = cap->second;
}

}  // namespace slurmtwin
