#include "traces/slurm_conf.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <filesystem>
#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <stdexcept>
#include <tuple>
#include <unordered_map>

#include "traces/file_io.hpp"
#include "traces/hostlist.hpp"
#include "traces/input_limits.hpp"
#include "traces/licenses.hpp"
#include "traces/node_order.hpp"
#include "traces/plugins.hpp"
#include "traces/read_report.hpp"
#include "traces/scontrol_show.hpp"
#include "traces/site_settings.hpp"
#include "traces/slurm_conf_keys.hpp"
#include "traces/text.hpp"
#include "traces/time_format.hpp"
#include "traces/topology.hpp"

namespace slurmtwin {
namespace {

namespace fs = std::filesystem;

constexpr int kMaxIncludeDepth = 16;

// TRES slurmctld always tracks (`scontrol show config` lists them); AccountingStorageTRES adds others.
const std::set<std::string> kAlwaysTracked = {"cpu",     "mem",     "energy", "node",
                                              "billing", "fs/disk", "vmem",   "pages"};

/// One Key=Value of a logical line, with where it was written.
struct Pair {
  std::string key;    // as written
  std::string value;  // quotes removed
  std::string file;
  std::uint64_t line = 0;
  std::uint64_t order = 0;  // position among all pairs read: a larger order was written later
};

struct ConfLine {
  std::string file;
  std::uint64_t line = 0;
  std::vector<Pair> pairs;
};

[[noreturn]] void fail(const Pair& p, const std::string& what) {
  throw InputError(p.file, p.line, p.key, what);
}

bool is_space(char c) {
  return std::isspace(static_cast<unsigned char>(c)) != 0;
}

std::string upper(std::string_view s) {
  std::string out(s);
  for (auto& c : out) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return out;
}

/// Drops a comment: '#' outside double quotes ends the line; "\#" is a literal '#'.
std::string strip_comment(std::string_view s) {
  std::string out;
  bool quoted = false;
  for (std::size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    if (c == '\\' && i + 1 < s.size() && s[i + 1] == '#') {
      out += '#';
      ++i;
      continue;
    }
    if (c == '"') quoted = !quoted;
    if (c == '#' && !quoted) break;
    out += c;
  }
  return out;
}

/// Splits "A=1 B = \"x y\" C=" into pairs (spaces around '=' allowed, as Slurm's parser does).
std::vector<Pair> split_pairs(std::string_view s, const std::string& file, std::uint64_t line,
                              std::uint64_t& order) {
  std::vector<Pair> out;
  std::size_t i = 0;
  const auto skip_ws = [&] {
    while (i < s.size() && is_space(s[i])) ++i;
  };
  while (true) {
    skip_ws();
    if (i >= s.size()) break;
    const auto key_start = i;
    while (i < s.size() && s[i] != '=' && !is_space(s[i])) ++i;
    std::string key(s.substr(key_start, i - key_start));
    skip_ws();
    if (i >= s.size() || s[i] != '=') throw InputError(file, line, key, "expected Key=Value");
    ++i;
    skip_ws();
    std::string value;
    if (i < s.size() && s[i] == '"') {
      const auto close = s.find('"', i + 1);
      if (close == std::string_view::npos) throw InputError(file, line, key, "unterminated quoted value");
      value = std::string(s.substr(i + 1, close - i - 1));
      i = close + 1;
    } else {
      const auto start = i;
      while (i < s.size() && !is_space(s[i])) ++i;
      value = std::string(s.substr(start, i - start));
    }
    out.push_back({std::move(key), std::move(value), file, line, ++order});
  }
  return out;
}

/// Reads logical lines (comments stripped, continuations joined, Includes expanded) in file order.
class ConfReader {
 public:
  std::vector<ConfLine> lines;
  /// When set, an Include that cannot be read is a warning here instead of an error (the nodes and
  /// partitions it may hold come from `scontrol show`).
  std::vector<std::string>* missing_include_warnings = nullptr;

  /// Appends records read from another source (`scontrol show ...`).
  void add(const std::vector<ConfRecord>& records) {
    for (const auto& r : records) {
      ConfLine l{r.file, r.line, {}};
      for (const auto& item : r.items) l.pairs.push_back({item.key, item.value, r.file, item.line, ++order_});
      if (!l.pairs.empty()) lines.push_back(std::move(l));
    }
  }

  void read(std::string_view content, const std::string& file, int depth) {
    const auto canonical = fs::absolute(fs::path(file)).lexically_normal().string();
    stack_.push_back(canonical);
    std::uint64_t line_no = 0, start_line = 1;
    std::string logical;
    bool continuing = false;
    for (auto raw : text::split(content, '\n')) {
      ++line_no;
      if (!raw.empty() && raw.back() == '\r') raw.remove_suffix(1);
      const auto stripped = strip_comment(raw);
      std::string_view t = stripped;
      while (!t.empty() && is_space(t.back())) t.remove_suffix(1);
      if (!continuing) start_line = line_no;
      if (!t.empty() && t.back() == '\\') {  // Slurm joins without inserting a space
        logical.append(t.substr(0, t.size() - 1));
        continuing = true;
        continue;
      }
      logical.append(t);
      continuing = false;
      process(logical, file, start_line, depth);
      logical.clear();
    }
    if (!logical.empty()) process(logical, file, start_line, depth);
    stack_.pop_back();
  }

 private:
  std::vector<std::string> stack_;  // files being read (include recursion guard)
  std::uint64_t order_ = 0;

  void process(std::string_view logical, const std::string& file, std::uint64_t line, int depth) {
    const auto t = text::trim(logical);
    if (t.empty()) return;
    if (text::starts_with_i(t, "include") && t.size() > 7 && (is_space(t[7]) || t[7] == '=')) {
      auto target = text::trim(t.substr(8));
      if (target.size() >= 2 && target.front() == '"' && target.back() == '"')
        target = target.substr(1, target.size() - 2);
      if (target.empty()) throw InputError(file, line, "Include", "no file named");
      fs::path path(target);
      if (path.is_relative()) path = fs::path(file).parent_path() / path;
      const auto canonical = fs::absolute(path).lexically_normal().string();
      if (std::find(stack_.begin(), stack_.end(), canonical) != stack_.end())
        throw InputError(file, line, "Include", fmt::format("recursive Include of {}", path.string()));
      if (depth >= kMaxIncludeDepth)
        throw InputError(file, line, "Include",
                         fmt::format("Includes nested deeper than {}", kMaxIncludeDepth));
      std::string content;
      try {
        content = read_input_file(path.string());
      } catch (const std::exception& e) {
        if (!missing_include_warnings) throw InputError(file, line, "Include", e.what());
        missing_include_warnings->push_back(
            fmt::format("{}:{}: Include not read ({}); nodes and partitions come from scontrol show", file,
                        line, e.what()));
        return;
      }
      read(content, path.string(), depth + 1);
      return;
    }
    lines.push_back({file, line, split_pairs(t, file, line, order_)});
  }
};

// ---------------------------------------------------------------------------------------------------
// value parsers: each throws InputError naming the pair's file:line and key

std::int64_t to_int(const Pair& p, std::int64_t lo, std::int64_t hi) {
  const auto v = text::parse_int(p.value);
  if (!v) fail(p, fmt::format("'{}' is not an integer", p.value));
  if (*v < lo || *v > hi) fail(p, fmt::format("{} is outside [{}, {}]", *v, lo, hi));
  return *v;
}

std::uint32_t to_u32(const Pair& p) {
  return static_cast<std::uint32_t>(to_int(p, 0, std::numeric_limits<std::uint32_t>::max()));
}

std::uint16_t to_u16(const Pair& p) {
  return static_cast<std::uint16_t>(to_int(p, 0, std::numeric_limits<std::uint16_t>::max()));
}

/// A count that may be UNLIMITED / INFINITE (-> `unlimited`).
std::uint32_t to_u32_or_unlimited(const Pair& p, std::uint32_t unlimited) {
  if (text::iequals(p.value, "UNLIMITED") || text::iequals(p.value, "INFINITE")) return unlimited;
  return to_u32(p);
}

bool to_bool(const Pair& p) {
  const auto v = text::to_lower(text::trim(p.value));
  if (v == "yes" || v == "true" || v == "1" || v == "up" || v == "on") return true;
  if (v == "no" || v == "false" || v == "0" || v == "down" || v == "off") return false;
  fail(p, fmt::format("'{}' is not YES or NO", p.value));
}

/// A Slurm time: minutes, [D-]HH:MM:SS forms or UNLIMITED (kUnlimited).
Seconds to_duration(const Pair& p) {
  const auto v = parse_slurm_duration(p.value);
  if (!v || *v == kUnsetTime)
    fail(p, fmt::format("'{}' is not a Slurm time (minutes, D-HH:MM:SS, UNLIMITED)", p.value));
  return *v;
}

/// Whole minutes or UNLIMITED, in seconds (OverTimeLimit).
Seconds to_minutes(const Pair& p) {
  if (text::iequals(p.value, "UNLIMITED") || text::iequals(p.value, "INFINITE")) return kUnlimited;
  return to_int(p, 0, std::numeric_limits<std::int32_t>::max()) * 60;
}

std::vector<std::string> to_list(const Pair& p, bool lower) {
  std::vector<std::string> out;
  for (auto item : text::split(p.value, ',')) {
    item = text::trim(item);
    if (item.empty()) continue;
    out.push_back(lower ? text::to_lower(item) : std::string(item));
  }
  return out;
}

/// A list where "ALL" means no restriction (-> empty).
std::vector<std::string> to_allow_list(const Pair& p) {
  if (text::iequals(text::trim(p.value), "ALL")) return {};
  return to_list(p, true);
}

std::optional<std::int64_t> parse_count(std::string_view s) {
  s = text::trim(s);
  if (s.empty()) return std::nullopt;
  std::int64_t scale = 1;
  switch (std::toupper(static_cast<unsigned char>(s.back()))) {
    case 'K':
      scale = 1024;
      break;
    case 'M':
      scale = 1024 * 1024;
      break;
    case 'G':
      scale = 1024LL * 1024 * 1024;
      break;
    case 'T':
      scale = 1024LL * 1024 * 1024 * 1024;
      break;
    case 'P':
      scale = 1024LL * 1024 * 1024 * 1024 * 1024;
      break;
    default:
      break;
  }
  if (scale != 1) s.remove_suffix(1);
  for (char c : s)
    if (c < '0' || c > '9') return std::nullopt;
  const auto v = text::parse_int(s);
  if (!v || *v > std::numeric_limits<std::int64_t>::max() / scale) return std::nullopt;
  return *v * scale;
}

/// Splits on commas outside brackets and parentheses.
std::vector<std::string> split_top(std::string_view s) {
  std::vector<std::string> out;
  int depth = 0;
  std::size_t from = 0;
  for (std::size_t i = 0; i <= s.size(); ++i) {
    if (i < s.size() && (s[i] == '[' || s[i] == '(')) ++depth;
    if (i < s.size() && (s[i] == ']' || s[i] == ')')) --depth;
    if (i == s.size() || (s[i] == ',' && depth == 0)) {
      const auto item = text::trim(s.substr(from, i - from));
      if (!item.empty()) out.emplace_back(item);
      from = i + 1;
    }
  }
  return out;
}

using Table = std::map<std::string, Pair>;  // lower-case key -> the pair that set it

const Pair* get(const Table& t, std::string_view key) {
  const auto it = t.find(std::string(key));
  return it == t.end() ? nullptr : &it->second;
}

/// The first of `keys` that is set (earlier keys take precedence, as in Slurm's lookups).
const Pair* get_first(const Table& t, std::initializer_list<std::string_view> keys) {
  for (auto k : keys)
    if (const auto* p = get(t, k)) return p;
  return nullptr;
}

/// Of two mutually exclusive keys, the one written last (nullptr when neither is set).
const Pair* get_last(const Table& t, std::string_view a, std::string_view b) {
  const auto* pa = get(t, a);
  const auto* pb = get(t, b);
  if (!pa) return pb;
  if (!pb) return pa;
  return pa->order > pb->order ? pa : pb;
}

/// A DefMem*/MaxMem* pair: its two keys (lower case) and the partition's field for each.
struct MemKeys {
  std::string_view node_key, cpu_key;
  std::int64_t Partition::*per_node;
  std::int64_t Partition::*per_cpu;
};
constexpr MemKeys kDefMem{"defmempernode", "defmempercpu", &Partition::def_mem_per_node_mb,
                          &Partition::def_mem_per_cpu_mb};
constexpr MemKeys kMaxMem{"maxmempernode", "maxmempercpu", &Partition::max_mem_per_node_mb,
                          &Partition::max_mem_per_cpu_mb};

/// The per-GPU defaults (DefCpuPerGPU, DefMemPerGPU), partition line or global: the partition's field
/// of each key (lower case), and its bound (slurmctld keeps CPUs per GPU in 16 bits).
struct GpuDefault {
  std::string_view key;
  std::optional<std::int64_t> Partition::*field;
  std::int64_t max;
};
constexpr std::array<GpuDefault, 2> kGpuDefaults = {
    GpuDefault{"defcpupergpu", &Partition::def_cpu_per_gpu, std::numeric_limits<std::uint16_t>::max()},
    GpuDefault{"defmempergpu", &Partition::def_mem_per_gpu_mb, std::numeric_limits<std::int64_t>::max()}};

/// A DefMem*/MaxMem* value in MB; UNLIMITED (or INFINITE), which slurmctld reads as no cap, is 0 (unset).
std::int64_t mem_mb(const Pair& p) {
  const auto v = text::trim(p.value);
  if (text::iequals(v, "UNLIMITED") || text::iequals(v, "INFINITE")) return 0;
  return to_int(p, 0, std::numeric_limits<std::int64_t>::max());
}

const std::set<std::string> kNodeKeys = {
    "nodename",       "cpus",           "procs",      "boards",       "sockets", "socketsperboard",
    "corespersocket", "threadspercore", "realmemory", "memspeclimit", "gres",    "weight",
    "feature",        "features",       "state"};

const std::set<std::string> kPartitionKeys = {
    "partitionname",     "nodes",         "default",           "state",        "maxtime",
    "defaulttime",       "defmempercpu",  "defmempernode",     "maxmempercpu", "maxmempernode",
    "defcpupergpu",      "defmempergpu",  "minnodes",          "maxnodes",     "priority",
    "priorityjobfactor", "prioritytier",  "oversubscribe",     "shared",       "exclusiveuser",
    "allowqos",          "allowaccounts", "denyaccounts",      "qos",          "preemptmode",
    "gracetime",         "overtimelimit", "tresbillingweights"};

const std::set<std::string> kNodeStates = {"CLOUD",  "DOWN", "DRAIN",   "FAIL",  "FAILING",
                                           "FUTURE", "IDLE", "UNKNOWN", "RESUME"};

const std::set<std::string> kPriorityFlags = {"ACCRUE_ALWAYS",   "CALCULATE_RUNNING",
                                              "DEPTH_OBLIVIOUS", "FAIR_TREE",
                                              "INCR_ONLY",       "MAX_TRES",
                                              "MAX_TRES_GRES",   "NO_FAIR_TREE",
                                              "NO_NORMAL_ALL",   "NO_NORMAL_ASSOC",
                                              "NO_NORMAL_PART",  "NO_NORMAL_QOS",
                                              "NO_NORMAL_TRES",  "SMALL_RELATIVE_TO_TIME"};

/// SelectTypeParameters in Slurm's spelling (matched case-insensitively).
const std::vector<std::string> kSelectTypeParameters = {"CR_CPU",
                                                        "CR_CPU_Memory",
                                                        "CR_Core",
                                                        "CR_Core_Memory",
                                                        "CR_Socket",
                                                        "CR_Socket_Memory",
                                                        "CR_Memory",
                                                        "CR_ONE_TASK_PER_CORE",
                                                        "CR_CORE_DEFAULT_DIST_BLOCK",
                                                        "CR_LLN",
                                                        "CR_Pack_Nodes",
                                                        "LL_SHARED_GRES",
                                                        "MULTIPLE_SHARING_GRES_PJ",
                                                        "ENFORCE_BINDING_GRES",
                                                        "ONE_TASK_PER_SHARING_GRES"};

/// Builds a Site from logical lines in file order.
class SiteBuilder {
 public:
  /// `topology_conf`: the topology.conf that topology/tree reads ("" = none to read).
  SiteBuilder(std::vector<std::string>& warnings, bool lenient, std::vector<SettingSource>* sources,
              int version, std::string topology_conf)
      : warnings_(warnings),
        lenient_(lenient),
        sources_(sources),
        version_(version),
        topology_conf_(std::move(topology_conf)) {
    init_globals();
    site_.scheduler.slurm_version = version_;
    // Fair Tree became the default in 19.05: before, classic fair share unless PriorityFlags says FAIR_TREE.
    if (version_ < kFairTreeDefault) site_.scheduler.priority_flags.erase("FAIR_TREE");
  }

  void apply(const ConfLine& line) {
    if (line.pairs.empty()) return;
    const auto kind = text::to_lower(line.pairs.front().key);
    if (kind == "nodename" || kind == "partitionname") record_line(line);
    if (kind == "nodename") return node_line(line);
    if (kind == "partitionname") return partition_line(line);
    if (kind == "nodeset") return nodeset_line(line);
    if (kind == "frontendname") front_end_ = true;
    if (kind == "frontendname" || kind == "downnodes" || kind == "switchname") {
      warn_once(kind, line.pairs.front(),
                fmt::format("{} lines are not modelled; ignored", line.pairs.front().key));
      return;
    }
    for (const auto& p : line.pairs) global(p);
  }

  // slurmctld refuses to start when PriorityWeightTRES or a TRESBillingWeights weighs a TRES it does not
  // track ("TRES weight 'gres:gpu' is not a configured TRES type", slurm_get_tres_weight_array): GRES
  // are tracked only when AccountingStorageTRES names them.
  void check_weighed_tres() const {
    std::vector<const Pair*> pairs;
    if (priority_weight_tres_) pairs.push_back(&*priority_weight_tres_);
    for (const auto& p : billing_weights_) pairs.push_back(&p);
    const auto& extra = site_.scheduler.accounting_storage_tres;
    for (const auto* p : pairs)
      for (const auto& [tres, weight] : parse_tres_weights(p->value))
        if (!kAlwaysTracked.count(tres) && std::find(extra.begin(), extra.end(), tres) == extra.end())
          fail(*p, fmt::format("weighs TRES '{}', which is not tracked: add it to AccountingStorageTRES "
                               "(slurmctld refuses to start: 'not a configured TRES type')",
                               tres));
  }

  /// How slurmctld checks a node's GRES at registration. A node whose slurmd reports fewer of a GRES
  /// than slurm.conf configures is kept with the configured count up to 18.08 with FastSchedule=2, in
  /// 19.05 unless FastSchedule=1, from 20.02 to 21.08 with SlurmdParameters=config_overrides, from 22.05
  /// never; else its registration is refused (INVALID_REG, drained).
  GresCheck gres_check() const {
    if (front_end_) return GresCheck::kFrontEnd;
    const bool keep = version_ >= 2205   ? false
                      : version_ >= 2002 ? config_overrides_
                      : version_ >= 1905 ? fast_schedule_ != 1
                                         : fast_schedule_ == 2;
    return keep ? GresCheck::kKeepLow : GresCheck::kRefuseLow;
  }

  Site finish() {
    check_weighed_tres();
    resolve_partitions();
    apply_global_partition_defaults();
    read_topology();
    if (sources_) {
      for (const auto& [key, source] : global_sources_) sources_->push_back(source);
      sources_->insert(sources_->end(), line_sources_.begin(), line_sources_.end());
      std::vector<std::string> unset;
      for (const auto& [key, handler] : globals_)
        if (!global_sources_.count(key))
          unset.push_back(nearest_slurm_conf_key(SlurmConfSection::kGlobal, key));
      std::sort(unset.begin(), unset.end());
      for (auto& key : unset) sources_->push_back({std::move(key), "", ""});
    }
    return std::move(site_);
  }

 private:
  struct PendingPartition {
    std::size_t index = 0;      // into site_.partitions
    std::optional<Pair> nodes;  // Nodes= as written
  };

  Site site_;
  bool config_overrides_ = false;  // SlurmdParameters=config_overrides
  int fast_schedule_ = 1;          // FastSchedule (before 20.02)
  bool front_end_ = false;         // a FrontEndName line
  Table node_defaults_, part_defaults_;
  std::vector<PendingPartition> pending_;
  std::map<std::string, Table> nodesets_;  // NodeSet name -> its pairs
  std::unordered_map<std::string, std::size_t> node_index_;
  std::set<std::string> warned_;
  std::unordered_map<std::string, std::function<void(const Pair&)>> globals_;
  std::vector<std::string>& warnings_;
  bool lenient_;
  std::vector<SettingSource>* sources_;
  int version_;  // Slurm version whose defaults apply (major * 100 + minor)
  std::string topology_conf_;
  std::optional<Pair> topology_plugin_;  // where TopologyPlugin was set, for errors about topology.conf
  // Where PriorityWeightTRES (the last) and each TRESBillingWeights were set: every TRES they weigh must
  // be tracked (check_weighed_tres).
  std::optional<Pair> priority_weight_tres_;
  std::vector<Pair> billing_weights_;
  static constexpr int kFairTreeDefault = 1905;
  std::map<std::string, SettingSource> global_sources_;  // lower-case key -> the pair that set it last

  std::vector<SettingSource> line_sources_;  // NodeName / PartitionName lines, in order
  Table global_mem_;                         // the global DefMem* / MaxMem* pairs as written
  std::map<std::string_view, std::int64_t> global_gpu_defaults_;  // kGpuDefaults key -> global value

  // Of the per-node and per-CPU forms of DefMem or MaxMem: the per-node one wins wherever both are
  // written, whatever their order (read_config.c), with slurmctld's error as a warning.
  const Pair* per_node_or_cpu(const Table& t, std::string_view node_key, std::string_view cpu_key) {
    const auto* node = get(t, node_key);
    const auto* cpu = get(t, cpu_key);
    if (node && cpu)
      warnings_.push_back(
          fmt::format("{}:{}: {} ignored, since it's mutually exclusive with {} (as Slurm does)", cpu->file,
                      cpu->line, cpu->key, node->key));
    return node ? node : cpu;
  }

  // Sets `part`'s field of pair `k` from `t` (the per-node form winning); false when `t` has neither.
  bool read_mem(const Table& t, const MemKeys& k, Partition& part) {
    const auto* p = per_node_or_cpu(t, k.node_key, k.cpu_key);
    if (!p) return false;
    part.*(text::iequals(p->key, k.cpu_key) ? k.per_cpu : k.per_node) = mem_mb(*p);
    return true;
  }

  // slurm.conf's DefMemPerNode/DefMemPerCPU, MaxMemPerNode/MaxMemPerCPU, DefCpuPerGPU and DefMemPerGPU
  // apply to every partition without its own (job_mgr.c, job_test.c: the partition's value if set,
  // else the global one).
  void apply_global_partition_defaults() {
    for (const auto* k : {&kDefMem, &kMaxMem}) {
      Partition global;
      if (!read_mem(global_mem_, *k, global)) continue;
      for (auto& part : site_.partitions)
        if (part.*k->per_cpu == 0 && part.*k->per_node == 0) {
          part.*k->per_cpu = global.*k->per_cpu;
          part.*k->per_node = global.*k->per_node;
        }
    }
    // The global per-GPU defaults apply to every partition without its own (_set_gpu_defaults).
    for (const auto& g : kGpuDefaults)
      if (const auto it = global_gpu_defaults_.find(g.key); it != global_gpu_defaults_.end())
        for (auto& part : site_.partitions)
          if (!(part.*g.field)) part.*g.field = it->second;
    // A per-CPU cap also raises the CPUs per node of a job asking memory per node (--mem): not modelled.
    for (const auto& part : site_.partitions)
      if (part.max_mem_per_cpu_mb > 0) {
        warnings_.push_back(fmt::format(
            "MaxMemPerCPU={} (partition {}): a job asking more memory per CPU gets more CPUs per task, as in "
            "Slurm; a job asking memory per node (--mem) is not raised to ceil(mem / MaxMemPerCPU) CPUs per "
            "node (not modelled)",
            part.max_mem_per_cpu_mb, part.name));
        break;
      }
  }

  void record_line(const ConfLine& l) {
    const auto& head = l.pairs.front();
    if (sources_)
      line_sources_.push_back(
          {head.key, head.value, fmt::format("{}:{}", l.file, l.line), SettingSource::Kind::kRecord});
  }

  // A key that is not modelled: a key slurmctld does not know is an error (slurmctld refuses to start;
  // --lenient makes it a warning); a known one that changes scheduling decisions is a warning naming
  // its effect; any other known key (paths, daemons, logging) changes nothing the simulator decides.
  void not_modelled(SlurmConfSection section, const std::string& kind, const Pair& p) {
    if (!known_slurm_conf_key(section, p.key, version_)) {
      const auto near = nearest_slurm_conf_key(section, p.key);
      const int last = section == SlurmConfSection::kGlobal ? last_version_reading(p.key) : 0;
      const auto what =
          last > 0 ? fmt::format(
                         "unknown key '{}' (slurmctld read it up to {}: --slurm-version for an older site)",
                         p.key, slurm_version_text(last))
                   : fmt::format("unknown {}key '{}'{}", kind.empty() ? "" : kind + " ", p.key,
                                 near.empty() ? "" : fmt::format(" (did you mean {}?)", near));
      if (!lenient_) fail(p, what + "; --lenient ignores it");
      warn_once("unknown:" + kind + ":" + p.key, p, what + "; ignored (--lenient)");
      return;
    }
    if (section == SlurmConfSection::kGlobal) {
      const auto effect = scheduling_effect(p.key);
      if (!effect.empty()) warn_once(p.key, p, fmt::format("{} is not modelled: {}", p.key, effect));
      if (sources_)
        global_sources_[text::to_lower(p.key)] = {
            p.key, p.value, fmt::format("{}:{}", p.file, p.line),
            effect.empty() ? SettingSource::Kind::kNoEffect : SettingSource::Kind::kNotModelled};
      return;
    }
    warn_once(kind + ":" + p.key, p, fmt::format("{} option {} is not modelled; ignored", kind, p.key));
  }

  // topology/tree reads topology.conf (slurmctld: beside slurm.conf; without it slurmctld does not
  // start), once every node is known.
  void read_topology() {
    if (site_.scheduler.topology_plugin != "topology/tree") return;
    std::error_code ec;
    if (topology_conf_.empty() || !fs::exists(topology_conf_, ec))
      fail(
          *topology_plugin_,
          topology_conf_.empty()
              ? std::string("topology/tree reads topology.conf: give it (--topology-conf)")
              : fmt::format("topology/tree reads topology.conf: {} not found (--topology-conf names another)",
                            topology_conf_));
    site_.switches = read_topology_conf(read_input_file(topology_conf_), topology_conf_, site_, warnings_);
    if (site_.scheduler.topology_param.count("Dragonfly"))
      warn_once("TopologyParam:Dragonfly", *topology_plugin_,
                "TopologyParam=Dragonfly is not modelled: jobs are placed as on a tree");
  }

  void warn_once(const std::string& id, const Pair& p, const std::string& what) {
    if (!warned_.insert(text::to_lower(id)).second) return;
    warnings_.push_back(fmt::format("{}:{}: {}", p.file, p.line, what));
  }

  static Table table_of(const ConfLine& l) {
    Table t;
    for (std::size_t i = 1; i < l.pairs.size(); ++i) t[text::to_lower(l.pairs[i].key)] = l.pairs[i];
    return t;
  }

  // ------------------------------------------------------------------------------------------------ nodes

  // A `NAME=DEFAULT` line updates `defaults` (they persist until another DEFAULT line changes them) and
  // gives nullopt; any other line gives its keys over the defaults, warning once per key not modelled.
  std::optional<Table> with_defaults(const ConfLine& l, Table& defaults, const std::set<std::string>& known,
                                     SlurmConfSection section, const std::string& kind) {
    const Table own = table_of(l);
    if (text::iequals(l.pairs.front().value, "DEFAULT")) {
      for (const auto& [k, p] : own) defaults[k] = p;
      return std::nullopt;
    }
    Table t = defaults;
    for (const auto& [k, p] : own) t[k] = p;
    for (const auto& [k, p] : t)
      if (!known.count(k)) not_modelled(section, kind, p);
    return t;
  }

  void node_line(const ConfLine& l) {
    const Pair& head = l.pairs.front();
    const auto merged = with_defaults(l, node_defaults_, kNodeKeys, SlurmConfSection::kNode, "NodeName");
    if (!merged) return;
    const Table& t = *merged;

    Node proto;
    const auto* cpus = get_first(t, {"cpus", "procs"});
    if (const auto* p = get(t, "boards")) proto.boards = to_u16(*p);
    if (proto.boards == 0) fail(*get(t, "boards"), "Boards must be > 0");
    if (const auto* p = get(t, "corespersocket")) proto.cores_per_socket = to_u16(*p);
    if (proto.cores_per_socket == 0) fail(*get(t, "corespersocket"), "CoresPerSocket must be > 0");
    if (const auto* p = get(t, "threadspercore")) proto.threads_per_core = to_u16(*p);
    if (proto.threads_per_core == 0) fail(*get(t, "threadspercore"), "ThreadsPerCore must be > 0");
    if (cpus) {
      proto.cpus = to_u16(*cpus);
      if (proto.cpus == 0) fail(*cpus, "CPUs must be > 0");
    }
    // Slurm's _parse_nodename: Sockets is the node's total; SocketsPerBoard multiplies by Boards; without
    // either, Sockets = CPUs / (cores * threads) when that divides, else one socket per board.
    const std::uint32_t per_socket = proto.cores_per_socket * proto.threads_per_core;
    if (const auto* p = get(t, "sockets")) {
      proto.sockets = to_u16(*p);
      if (proto.sockets == 0) fail(*p, "Sockets must be > 0");
    } else if (const auto* spb = get(t, "socketsperboard")) {
      proto.sockets = proto.boards * to_u16(*spb);
      if (proto.sockets == 0) fail(*spb, "SocketsPerBoard must be > 0");
    } else if (cpus && proto.cpus / per_socket > 0 && proto.cpus % per_socket == 0) {
      proto.sockets = proto.cpus / per_socket;
    } else {
      proto.sockets = proto.boards;
    }
    const std::uint32_t derived = proto.sockets * per_socket;
    if (!cpus) proto.cpus = derived;
    if (proto.sockets < proto.boards) {
      warn_once("boards<sockets:" + head.value, head,
                fmt::format("NodeName={}: Sockets({}) < Boards({}); Boards reset to 1 as Slurm does",
                            head.value, proto.sockets, proto.boards));
      proto.boards = 1;
    }
    if (proto.cpus != proto.sockets && proto.cpus != proto.sockets * proto.cores_per_socket &&
        proto.cpus != derived) {
      warnings_.push_back(
          fmt::format("{}:{}: NodeName={}: CPUs={} matches no Sockets*CoresPerSocket*ThreadsPerCore "
                      "product; reset to {} as Slurm does",
                      head.file, head.line, head.value, proto.cpus, derived));
      proto.cpus = derived;
    }
    if (const auto* p = get(t, "realmemory")) {
      proto.real_memory_mb = to_int(*p, 1, std::numeric_limits<std::int64_t>::max());
    }
    if (const auto* p = get(t, "memspeclimit")) {
      proto.mem_spec_limit_mb = to_int(*p, 0, std::numeric_limits<std::int64_t>::max());
      if (proto.mem_spec_limit_mb >= proto.real_memory_mb) {
        warnings_.push_back(
            fmt::format("{}:{}: NodeName={}: MemSpecLimit={} >= RealMemory; reset to 0 as Slurm does",
                        p->file, p->line, head.value, proto.mem_spec_limit_mb));
        proto.mem_spec_limit_mb = 0;
      }
    }
    if (const auto* p = get(t, "gres")) {
      try {
        proto.gres = parse_node_gres(p->value);
      } catch (const std::invalid_argument& e) {
        fail(*p, e.what());
      }
    }
    if (const auto* p = get(t, "weight")) {
      proto.weight = to_u32(*p);
      if (proto.weight == std::numeric_limits<std::uint32_t>::max()) --proto.weight;  // as Slurm
    }
    if (const auto* p = get_last(t, "feature", "features")) proto.features = to_list(*p, false);
    if (const auto* p = get(t, "state")) {
      proto.state = upper(text::trim(p->value));
      const auto base = proto.state.substr(0, proto.state.find('+'));
      if (!kNodeStates.count(base)) fail(*p, fmt::format("unknown node state '{}'", p->value));
    }

    std::vector<std::string> names;
    try {
      names = expand_hostlist(head.value, kMaxSiteNodes);
    } catch (const std::invalid_argument& e) {
      fail(head, e.what());
    }
    if (names.empty()) fail(head, "no node names");
    if (site_.nodes.size() + names.size() > kMaxSiteNodes)
      fail(head, fmt::format("more than {} nodes in the site", kMaxSiteNodes));
    for (auto& name : names) {
      if (node_index_.count(name)) fail(head, fmt::format("node '{}' defined twice", name));
      node_index_[name] = site_.nodes.size();
      proto.name = std::move(name);
      site_.nodes.push_back(proto);
    }
  }

  void nodeset_line(const ConfLine& l) {
    const Pair& head = l.pairs.front();
    Table t = table_of(l);
    if (!get(t, "nodes") && !get(t, "feature")) fail(head, "NodeSet needs Nodes= or Feature=");
    for (const auto& [k, p] : t)
      if (k != "nodes" && k != "feature") fail(p, "unknown NodeSet option");
    nodesets_[head.value] = std::move(t);
  }

  // ------------------------------------------------------------------------------------------------
  // partitions

  void partition_line(const ConfLine& l) {
    const Pair& head = l.pairs.front();
    const auto merged =
        with_defaults(l, part_defaults_, kPartitionKeys, SlurmConfSection::kPartition, "PartitionName");
    if (!merged) return;
    const Table& t = *merged;
    if (head.value.empty()) fail(head, "empty partition name");
    if (site_.find_partition(head.value)) fail(head, fmt::format("partition '{}' defined twice", head.value));

    Partition part;
    part.name = head.value;
    if (const auto* p = get(t, "default")) part.is_default = to_bool(*p);
    if (const auto* p = get(t, "state")) {
      part.state = upper(text::trim(p->value));
      if (part.state != "UP" && part.state != "DOWN" && part.state != "DRAIN" && part.state != "INACTIVE")
        fail(*p, fmt::format("'{}' is not UP, DOWN, DRAIN or INACTIVE", p->value));
    }
    if (const auto* p = get(t, "maxtime")) part.max_time = to_duration(*p);
    if (const auto* p = get(t, "defaulttime")) part.default_time = to_duration(*p);
    read_mem(t, kDefMem, part);
    read_mem(t, kMaxMem, part);
    for (const auto& g : kGpuDefaults)
      if (const auto* p = get(t, g.key)) part.*g.field = to_int(*p, 0, g.max);
    if (const auto* p = get(t, "minnodes")) part.min_nodes = to_u32(*p);
    if (const auto* p = get(t, "maxnodes")) part.max_nodes = to_u32_or_unlimited(*p, 0);
    // Priority= sets both PriorityJobFactor and PriorityTier; the explicit keys take precedence.
    if (const auto* p = get_first(t, {"priorityjobfactor", "priority"}))
      part.priority_job_factor = to_u16(*p);
    if (const auto* p = get_first(t, {"prioritytier", "priority"})) part.priority_tier = to_u16(*p);
    if (const auto* p = get_first(t, {"oversubscribe", "shared"})) parse_oversubscribe(*p, part);
    if (const auto* p = get(t, "exclusiveuser")) part.exclusive_user = to_bool(*p);
    if (const auto* p = get(t, "allowqos")) part.allow_qos = to_allow_list(*p);
    if (const auto* p = get(t, "allowaccounts")) part.allow_accounts = to_allow_list(*p);
    if (const auto* p = get(t, "denyaccounts")) {
      if (get(t, "allowaccounts") && !part.allow_accounts.empty()) {
        warnings_.push_back(
            fmt::format("{}:{}: partition {}: both AllowAccounts and DenyAccounts; DenyAccounts "
                        "ignored as Slurm does",
                        p->file, p->line, part.name));
      } else {
        part.deny_accounts = to_list(*p, true);
      }
    }
    if (const auto* p = get(t, "qos")) part.qos = text::to_lower(text::trim(p->value));
    if (const auto* p = get(t, "preemptmode")) {
      try {
        part.preempt_mode = parse_preempt_mode(p->value);
      } catch (const std::invalid_argument& e) {
        fail(*p, e.what());
      }
    }
    if (const auto* p = get(t, "gracetime")) part.grace_time = to_u32(*p);
    if (const auto* p = get(t, "overtimelimit")) part.over_time_limit = to_minutes(*p);
    if (const auto* p = get(t, "tresbillingweights")) {
      billing_weights_.push_back(*p);
      try {
        part.tres_billing_weights = parse_tres_weights(p->value);
      } catch (const std::invalid_argument& e) {
        fail(*p, e.what());
      }
    }
    if (part.default_time != kUnsetTime && part.max_time != kUnlimited && part.default_time > part.max_time) {
      const auto* p = get(t, "defaulttime");
      warnings_.push_back(
          fmt::format("{}:{}: partition {}: DefaultTime exceeds MaxTime; DefaultTime unset as Slurm "
                      "does",
                      p->file, p->line, part.name));
      part.default_time = kUnsetTime;
    }
    if (part.is_default) {
      for (auto& other : site_.partitions) {
        if (!other.is_default) continue;
        warnings_.push_back(fmt::format("{}:{}: partition {} replaces {} as the default partition", head.file,
                                        head.line, part.name, other.name));
        other.is_default = false;
      }
    }
    PendingPartition pending;
    pending.index = site_.partitions.size();
    if (const auto* p = get(t, "nodes")) pending.nodes = *p;
    pending_.push_back(std::move(pending));
    site_.partitions.push_back(std::move(part));
  }

  static void parse_oversubscribe(const Pair& p, Partition& part) {
    const auto v = upper(text::trim(p.value));
    const auto colon = v.find(':');
    const auto kind = v.substr(0, colon);
    std::optional<std::int64_t> count;
    if (colon != std::string::npos) {
      count = text::parse_int(v.substr(colon + 1));
      if (!count || *count < 1 || *count > 65535) fail(p, fmt::format("bad job count in '{}'", p.value));
    }
    if (kind == "NO" || kind == "EXCLUSIVE") {
      if (count) fail(p, fmt::format("'{}' takes no job count", kind));
      part.oversubscribe = kind == "NO" ? OverSubscribe::kNo : OverSubscribe::kExclusive;
      part.oversubscribe_count = 1;
    } else if (kind == "YES" || kind == "FORCE") {
      part.oversubscribe = kind == "YES" ? OverSubscribe::kYes : OverSubscribe::kForce;
      part.oversubscribe_count = static_cast<std::uint16_t>(count.value_or(4));  // Slurm's default is 4
    } else {
      fail(p, fmt::format("'{}' is not NO, YES[:N], FORCE[:N] or EXCLUSIVE", p.value));
    }
  }

  std::vector<std::size_t> resolve_nodes(const Pair& p, int depth) {
    std::vector<std::size_t> out;
    for (const auto& item : split_top(p.value)) {
      if (text::iequals(item, "ALL")) {
        for (std::size_t i = 0; i < site_.nodes.size(); ++i) out.push_back(i);
        continue;
      }
      if (const auto it = nodesets_.find(item); it != nodesets_.end()) {
        if (depth > 4) fail(p, fmt::format("NodeSet '{}' nests too deeply", item));
        if (const auto* nodes = get(it->second, "nodes")) {
          const auto sub = resolve_nodes(*nodes, depth + 1);
          out.insert(out.end(), sub.begin(), sub.end());
        }
        if (const auto* feature = get(it->second, "feature")) {
          for (std::size_t i = 0; i < site_.nodes.size(); ++i) {
            const auto& f = site_.nodes[i].features;
            if (std::find(f.begin(), f.end(), feature->value) != f.end()) out.push_back(i);
          }
        }
        continue;
      }
      std::vector<std::string> names;
      try {
        // A list of existing nodes: longer than the site (plus repeats) means a bad range.
        names = expand_hostlist(item, site_.nodes.size() + 1);
      } catch (const std::invalid_argument& e) {
        fail(p, e.what());
      }
      for (const auto& n : names) {
        const auto it = node_index_.find(n);
        if (it == node_index_.end()) fail(p, fmt::format("unknown node '{}'", n));
        out.push_back(it->second);
      }
    }
    return out;
  }

  void resolve_partitions() {
    for (const auto& pending : pending_) {
      if (!pending.nodes) continue;
      auto idx = resolve_nodes(*pending.nodes, 0);
      // A partition is a node bitmap in Slurm: its nodes are in node index (slurm.conf) order.
      std::sort(idx.begin(), idx.end());
      idx.erase(std::unique(idx.begin(), idx.end()), idx.end());
      auto& part = site_.partitions[pending.index];
      for (auto i : idx) part.nodes.push_back(site_.nodes[i].name);
    }
  }

  // ------------------------------------------------------------------------------------------------ globals

  void global(const Pair& p) {
    const auto key = text::to_lower(p.key);
    const auto it = globals_.find(key);
    if (it == globals_.end()) {
      not_modelled(SlurmConfSection::kGlobal, "", p);
      return;
    }
    it->second(p);
    if (sources_) global_sources_[key] = {p.key, p.value, fmt::format("{}:{}", p.file, p.line)};
  }

  void init_globals() {
    SchedulerSettings* const s = &site_.scheduler;
    auto& g = globals_;
    for (const auto* k : {&kDefMem, &kMaxMem})
      for (const auto key : {k->node_key, k->cpu_key})
        g[std::string(key)] = [this, key](const Pair& p) {
          mem_mb(p);  // a bad value fails here, naming its line
          global_mem_[std::string(key)] = p;
        };
    for (const auto& gd : kGpuDefaults)
      g[std::string(gd.key)] = [this, gd](const Pair& p) {
        global_gpu_defaults_[gd.key] = to_int(p, 0, gd.max);
      };
    g["slurmdparameters"] = [this](const Pair& p) {
      config_overrides_ = false;
      for (const auto& v : to_list(p, false))
        config_overrides_ = config_overrides_ || text::iequals(v, "config_overrides");
    };
    g["fastschedule"] = [this](const Pair& p) { fast_schedule_ = to_int(p, 0, 2); };
    // Cluster-wide licences; slurmctld refuses to start on a list it cannot read (license_init: fatal).
    g["licenses"] = [this](const Pair& p) {
      try {
        site_.licenses = parse_licenses(p.value);
      } catch (const std::invalid_argument& e) {
        fail(p, e.what());
      }
    };
    g["clustername"] = [this](const Pair& p) {
      if (text::trim(p.value).empty()) fail(p, "empty ClusterName");
      site_.cluster_name = text::to_lower(text::trim(p.value));  // slurmctld lower-cases it
    };
    // The priority settings of the one table (traces/site_settings.hpp), read as slurm.conf writes them.
    for (const auto& setting : site_settings()) {
      if (setting.scheduler_parameter) continue;
      g[text::to_lower(setting.name)] = [s, &setting](const Pair& p) {
        const std::int64_t v = setting.kind == SettingKind::kFlag       ? to_bool(p)
                               : setting.kind == SettingKind::kDuration ? to_duration(p)
                                                                        : to_int(p, setting.min, setting.max);
        try {
          set_site_setting(*s, setting, v * setting.scale);
        } catch (const std::invalid_argument& e) {
          fail(p, e.what());
        }
      };
    }
    g["priorityweighttres"] = [this, s](const Pair& p) {
      priority_weight_tres_ = p;
      try {
        s->weight_tres = parse_tres_weights(p.value);
      } catch (const std::invalid_argument& e) {
        fail(p, e.what());
      }
    };
    g["priorityflags"] = [s, this](const Pair& p) {
      // Each PriorityFlags line starts from the version's default (FAIR_TREE since 19.05); NO_FAIR_TREE
      // and DEPTH_OBLIVIOUS clear it.
      std::set<std::string> flags;
      if (version_ >= kFairTreeDefault) flags.insert("FAIR_TREE");
      for (const auto& f : to_list(p, false)) {
        const auto u = upper(f);
        if (!kPriorityFlags.count(u)) fail(p, fmt::format("unknown PriorityFlags flag '{}'", f));
        flags.insert(u);
      }
      if (flags.count("NO_FAIR_TREE") || flags.count("DEPTH_OBLIVIOUS")) flags.erase("FAIR_TREE");
      s->priority_flags = std::move(flags);
    };
    g["priorityusageresetperiod"] = [s](const Pair& p) {
      static const std::set<std::string> ok = {"NONE",    "NOW",       "DAILY", "WEEKLY",
                                               "MONTHLY", "QUARTERLY", "YEARLY"};
      const auto v = upper(text::trim(p.value));
      if (!ok.count(v))
        fail(p, fmt::format("'{}' is not NONE, NOW, DAILY, WEEKLY, MONTHLY, QUARTERLY or YEARLY", p.value));
      s->usage_reset_period = v;
    };
    g["fairsharedampeningfactor"] = [s](const Pair& p) {
      s->fairshare_dampening_factor =
          static_cast<std::uint32_t>(to_int(p, 1, std::numeric_limits<std::uint16_t>::max()));
    };
    // A plugin slurmctld lacks stops the import (slurmctld would not start); one it has that is not
    // modelled is kept as written and warned about.
    const auto plugin = [this, &g](const char* key, std::string SchedulerSettings::*field,
                                   SchedulerSettings* ss) {
      g[text::to_lower(key)] = [this, ss, field, key](const Pair& p) {
        const auto v = text::to_lower(text::trim(p.value));
        if (v.empty()) fail(p, "empty value");
        try {
          if (const auto instead = check_plugin(key, v); !instead.empty())
            warn_once(key, p, fmt::format("{}={} is not modelled: {}", key, v, instead));
        } catch (const std::invalid_argument& e) {
          fail(p, e.what());
        }
        ss->*field = v;
      };
    };
    plugin("SchedulerType", &SchedulerSettings::scheduler_type, s);
    plugin("PriorityType", &SchedulerSettings::priority_type, s);
    plugin("PreemptType", &SchedulerSettings::preempt_type, s);
    plugin("SelectType", &SchedulerSettings::select_type, s);
    g["schedulerparameters"] = [this, s](const Pair& p) {
      std::vector<std::string> unmodelled;
      try {
        apply_scheduler_parameters(p.value, *s, unmodelled);
      } catch (const std::invalid_argument& e) {
        fail(p, e.what());
      }
      for (const auto& u : unmodelled)
        warn_once("SchedulerParameters:" + u, p,
                  fmt::format("SchedulerParameters option {} is not modelled; kept in params.other", u));
    };
    g["preemptmode"] = [s](const Pair& p) {
      try {
        s->preempt_mode = parse_preempt_mode(p.value);
      } catch (const std::invalid_argument& e) {
        fail(p, e.what());
      }
    };
    g["preemptexempttime"] = [s](const Pair& p) {
      s->preempt_exempt_time = text::trim(p.value) == "-1" ? 0 : to_duration(p);
    };
    g["selecttypeparameters"] = [this, s](const Pair& p) {
      std::set<std::string> out;
      for (const auto& item : to_list(p, false)) {
        const auto it = std::find_if(kSelectTypeParameters.begin(), kSelectTypeParameters.end(),
                                     [&](const std::string& k) { return text::iequals(k, item); });
        if (it != kSelectTypeParameters.end()) {
          out.insert(*it);
        } else {
          warn_once("SelectTypeParameters:" + item, p,
                    fmt::format("SelectTypeParameters option {} is not known; kept as written", item));
          out.insert(item);
        }
      }
      s->select_type_parameters = std::move(out);
    };
    g["killwait"] = [s](const Pair& p) {
      s->kill_wait = to_int(p, 0, std::numeric_limits<std::uint16_t>::max());
    };
    g["overtimelimit"] = [s](const Pair& p) { s->over_time_limit = to_minutes(p); };
    g["minjobage"] = [s](const Pair& p) { s->min_job_age = to_u32(p); };
    g["enforcepartlimits"] = [s](const Pair& p) {
      auto v = upper(text::trim(p.value));
      if (v == "YES") v = "ANY";  // Slurm's old spelling of ANY
      if (v != "ALL" && v != "ANY" && v != "NO")
        fail(p, fmt::format("'{}' is not ALL, ANY, NO or YES", p.value));
      s->enforce_part_limits = v;
    };
    g["accountingstorageenforce"] = [s](const Pair& p) {
      static const std::set<std::string> ok = {"associations", "limits", "nojobs", "nosteps",
                                               "qos",          "safe",   "wckeys"};
      std::set<std::string> out;
      for (const auto& item : to_list(p, true)) {
        if (item == "none" || item == "0") continue;
        if (item == "all") {  // all but nojobs and nosteps
          out.insert({"associations", "limits", "qos", "safe", "wckeys"});
          continue;
        }
        if (!ok.count(item)) fail(p, fmt::format("unknown AccountingStorageEnforce option '{}'", item));
        out.insert(item);
      }
      // Slurm's implications: limits, qos and safe enforce associations; safe enforces limits.
      if (out.count("limits") || out.count("qos") || out.count("safe")) out.insert("associations");
      if (out.count("safe")) out.insert("limits");
      s->accounting_storage_enforce = std::move(out);
    };
    g["accountingstoragetres"] = [s](const Pair& p) {
      s->accounting_storage_tres.clear();  // (the extra ones)
      for (auto& t : to_list(p, true))
        if (!kAlwaysTracked.count(t)) s->accounting_storage_tres.push_back(std::move(t));
    };
    g["firstjobid"] = [s](const Pair& p) {
      s->first_job_id = static_cast<std::uint32_t>(to_int(p, 1, std::numeric_limits<std::uint32_t>::max()));
    };
    g["jobrequeue"] = [s](const Pair& p) { s->job_requeue = to_bool(p); };
    g["topologyplugin"] = [this, s](const Pair& p) {
      auto v = text::to_lower(text::trim(p.value));
      if (v.empty()) v = "topology/none";
      try {
        if (const auto instead = check_plugin("TopologyPlugin", v); !instead.empty())
          warn_once("TopologyPlugin", p,
                    fmt::format("TopologyPlugin={} is not modelled: {}", p.value, instead));
      } catch (const std::invalid_argument& e) {
        fail(p, e.what());
      }
      // The site YAML knows only the two modelled placements: every other is replayed as flat.
      if (v != "topology/tree") v = "topology/flat";
      s->topology_plugin = v;
      topology_plugin_ = p;
    };
    g["topologyparam"] = [s](const Pair& p) {
      // Slurm 22.05 looks options up case-insensitively; only these two change node choice.
      std::set<std::string> out;
      for (const auto& item : to_list(p, false)) {
        if (text::iequals(item, "TopoOptional"))
          out.insert("TopoOptional");
        else if (text::iequals(item, "Dragonfly"))
          out.insert("Dragonfly");
        else
          out.insert(item);  // networking options (NoInAddrAny, ...): no effect on scheduling
      }
      s->topology_param = std::move(out);
    };
  }
};

Site build_site(const ConfReader& reader, std::vector<std::string>& warnings, bool lenient,
                std::vector<SettingSource>* sources = nullptr, int version = kModelledSlurmVersion,
                std::string topology_conf = {}, GresCheck* gres_check = nullptr) {
  SiteBuilder builder(warnings, lenient, sources, version, std::move(topology_conf));
  for (const auto& line : reader.lines) builder.apply(line);
  if (gres_check) *gres_check = builder.gres_check();
  Site site = builder.finish();
  order_nodes_as_slurmctld(site);
  return site;
}

}  // namespace

std::vector<NodeGres> parse_node_gres(std::string_view text_in) {
  std::vector<NodeGres> out;
  const auto t = text::trim(text_in);
  if (t.empty() || text::iequals(t, "(null)")) return out;
  for (auto item : split_top(t)) {
    if (const auto paren = item.find('('); paren != std::string::npos)
      item = std::string(text::trim(item.substr(0, paren)));
    std::vector<std::string> parts;
    for (auto part : text::split(item, ':'))
      if (!text::iequals(part, "no_consume")) parts.emplace_back(text::trim(part));
    if (parts.empty() || parts.front().empty())
      throw std::invalid_argument(fmt::format("bad GRES '{}'", item));
    NodeGres g;
    g.name = parts.front();
    g.count = 1;
    std::size_t type_end = parts.size();
    if (parts.size() > 1) {
      if (const auto c = parse_count(parts.back())) {
        g.count = *c;
        type_end = parts.size() - 1;
      }
    }
    for (std::size_t i = 1; i < type_end; ++i) g.type += (i > 1 ? ":" : "") + parts[i];
    if (type_end > 1 && g.type.empty())
      throw std::invalid_argument(fmt::format("empty GRES type in '{}'", item));
    out.push_back(std::move(g));
  }
  return out;
}

void apply_scheduler_parameters(std::string_view text_in, SchedulerSettings& s,
                                std::vector<std::string>& unmodelled) {
  // slurmctld reads "SchedulerParameters==bf_max_job_user=20" (a doubled '=') as the list after it.
  text_in = text::trim(text_in);
  while (!text_in.empty() && text_in.front() == '=') text_in.remove_prefix(1);
  for (auto item : text::split(text_in, ',')) {
    item = text::trim(item);
    if (item.empty()) continue;
    const auto eq = item.find('=');
    auto key = text::to_lower(text::trim(item.substr(0, eq)));
    // Names older slurmctld read (and 22.05 still reads) for the same options.
    if (key == "max_job_bf") key = "bf_max_job_test";
    const bool has_value = eq != std::string_view::npos;
    const std::string value(has_value ? text::trim(item.substr(eq + 1)) : std::string_view{});
    const auto* setting = find_site_setting(key);
    if (!setting || !setting->scheduler_parameter) {
      s.params.other[key] = value;
      unmodelled.push_back(key);
      continue;
    }
    if (setting->kind == SettingKind::kFlag) {
      if (has_value)
        throw std::invalid_argument(fmt::format("SchedulerParameters option {} takes no value", key));
      set_site_setting(s, *setting, 1);
      continue;
    }
    // An integer in slurm.conf's unit (bf_window: minutes), within the setting's bounds.
    if (!has_value)
      throw std::invalid_argument(fmt::format("SchedulerParameters option {} needs =value", key));
    const auto v = text::parse_int(value);
    const std::int64_t lo = setting->min / setting->scale, hi = setting->max / setting->scale;
    if (!v || *v < lo || *v > hi)
      throw std::invalid_argument(
          fmt::format("SchedulerParameters option {}={} is not an integer in [{}, {}]", key, value, lo, hi));
    set_site_setting(s, *setting, *v * setting->scale);
  }
}

Site import_slurm_conf_text(std::string_view content, const std::string& file_name,
                            std::vector<std::string>& warnings, bool lenient) {
  ConfReader reader;
  reader.read(content, file_name, 0);
  return build_site(reader, warnings, lenient);
}

Site import_slurm_conf(const std::string& path, std::vector<std::string>& warnings,
                       const std::string& gres_conf_path, bool lenient) {
  SlurmConfigFiles files;
  files.slurm_conf = path;
  files.gres_conf = gres_conf_path;
  return import_slurm_config(files, warnings, lenient);
}

Site import_slurm_config(const SlurmConfigFiles& files, std::vector<std::string>& warnings, bool lenient,
                         std::vector<SettingSource>* sources) {
  if (files.slurm_conf.empty() && files.scontrol_config.empty())
    throw std::invalid_argument(
        "no cluster configuration: give a slurm.conf or `scontrol show config` output");
  const bool own_nodes = !files.scontrol_nodes.empty(), own_partitions = !files.scontrol_partitions.empty();
  ConfReader reader;
  if (own_nodes && own_partitions) reader.missing_include_warnings = &warnings;
  if (!files.slurm_conf.empty()) {
    reader.read(read_input_file(files.slurm_conf), files.slurm_conf, 0);
    // scontrol's nodes / partitions replace slurm.conf's: they are what slurmctld runs with
    std::erase_if(reader.lines, [&](const ConfLine& l) {
      const auto& head = l.pairs.front().key;
      return (own_nodes && text::iequals(head, "NodeName")) ||
             (own_partitions && text::iequals(head, "PartitionName"));
    });
  }
  std::string reported_version;  // scontrol show config's SLURM_VERSION
  if (!files.scontrol_config.empty())
    reader.add(read_scontrol_config(read_input_file(files.scontrol_config), files.scontrol_config,
                                    &reported_version));
  if (own_nodes)
    reader.add(read_scontrol_nodes(read_input_file(files.scontrol_nodes), files.scontrol_nodes, warnings));
  if (own_partitions)
    reader.add(
        read_scontrol_partitions(read_input_file(files.scontrol_partitions), files.scontrol_partitions));
  const auto& version_text = !files.slurm_version.empty() ? files.slurm_version : reported_version;
  const int version = version_text.empty() ? kModelledSlurmVersion : parse_slurm_version(version_text);
  if (sources && !version_text.empty())
    sources->push_back({"SlurmVersion", version_text,
                        !files.slurm_version.empty() ? std::string("--slurm-version") : files.scontrol_config,
                        SettingSource::Kind::kRecord});
  // topology.conf: the one named, else the one beside slurm.conf (where slurmctld reads it).
  std::string topology = files.topology_conf;
  if (topology.empty() && !files.slurm_conf.empty())
    topology = (fs::path(files.slurm_conf).parent_path() / "topology.conf").string();
  auto gres_check = GresCheck::kRefuseLow;
  Site site = build_site(reader, warnings, lenient, sources, version, topology, &gres_check);
  // scontrol prints the cluster's PreemptMode for a partition that sets none: the same as unset
  if (own_partitions)
    for (auto& p : site.partitions)
      if (p.preempt_mode == site.scheduler.preempt_mode) p.preempt_mode = PreemptMode::kUnset;
  std::string gres = files.gres_conf;
  if (gres.empty() && !files.slurm_conf.empty()) {
    const auto beside = fs::path(files.slurm_conf).parent_path() / "gres.conf";
    std::error_code ec;
    if (fs::is_regular_file(beside, ec)) gres = beside.string();
  }
  if (!gres.empty()) import_gres_conf(gres, site, warnings, gres_check);
  return site;
}

void apply_gres_conf(std::string_view content, const std::string& file_name, Site& site,
                     std::vector<std::string>& warnings, GresCheck check) {
  ConfReader reader;
  reader.read(content, file_name, 0);
  std::unordered_map<std::string, std::size_t> index;
  for (std::size_t i = 0; i < site.nodes.size(); ++i) index[site.nodes[i].name] = i;
  std::set<std::string> warned;
  const auto warn_once = [&](const std::string& id, const Pair& p, const std::string& what) {
    if (warned.insert(text::to_lower(id)).second)
      warnings.push_back(fmt::format("{}:{}: {}", p.file, p.line, what));
  };
  // (node index, name, type) -> summed count; several lines (one per device file) add up.
  std::map<std::tuple<std::size_t, std::string, std::string>, std::int64_t> counts;
  std::vector<std::tuple<std::size_t, std::string, std::string>> order;
  std::map<std::tuple<std::size_t, std::string, std::string>, Pair> where;
  static const std::set<std::string> kKnown = {"nodename", "name", "type", "count", "file", "autodetect"};
  // Whether slurmd detects GPUs itself (AutoDetect=nvml, rsmi, ...; off by default): the twin then takes
  // the lines' counts as what it finds.
  const bool autodetect = std::any_of(reader.lines.begin(), reader.lines.end(), [](const ConfLine& l) {
    return std::any_of(l.pairs.begin(), l.pairs.end(), [](const Pair& p) {
      return text::iequals(p.key, "autodetect") && !text::iequals(text::trim(p.value), "off");
    });
  });
  for (const auto& line : reader.lines) {
    Table t;
    for (const auto& p : line.pairs) t[text::to_lower(p.key)] = p;
    for (const auto& [k, p] : t)
      if (!kKnown.count(k))
        warn_once("gres:" + k, p, fmt::format("gres.conf option {} is not modelled; ignored", p.key));
    const auto* name = get(t, "name");
    if (!name) continue;  // e.g. a lone AutoDetect=off
    if (text::trim(name->value).empty()) fail(*name, "empty GRES name");
    std::int64_t count = 1;
    if (const auto* c = get(t, "count")) {
      const auto v = parse_count(c->value);
      if (!v) fail(*c, fmt::format("'{}' is not a count", c->value));
      count = *v;
    } else if (const auto* f = get(t, "file")) {
      try {
        count = static_cast<std::int64_t>(expand_hostlist(f->value, kMaxGresCount).size());
      } catch (const std::invalid_argument& e) {
        fail(*f, e.what());
      }
    }
    // From 20.02 slurmd discards a GPU neither detected nor given a File= ("Discarding the following
    // config-only GPU due to lack of File specification", gres_gpu.c): it reports none of it.
    if (text::iequals(text::trim(name->value), "gpu") && !get(t, "file") && !autodetect &&
        site.scheduler.slurm_version >= 2002 && check != GresCheck::kFrontEnd && count > 0) {
      warn_once("gres-nofile", *name,
                "a GPU line without File= (and AutoDetect off): slurmd discards it, reporting 0 such GPUs");
      count = 0;
    }
    const std::string type = get(t, "type") ? std::string(text::trim(get(t, "type")->value)) : std::string();
    std::vector<std::size_t> nodes;
    if (const auto* n = get(t, "nodename")) {
      std::vector<std::string> names;
      try {
        names = expand_hostlist(n->value, kMaxSiteNodes);
      } catch (const std::invalid_argument& e) {
        fail(*n, e.what());
      }
      std::size_t unknown = 0;  // one warning per line, not per name: a range can name millions
      const std::string* first_unknown = nullptr;
      for (const auto& nm : names) {
        const auto it = index.find(nm);
        if (it == index.end()) {
          if (unknown++ == 0) first_unknown = &nm;
          continue;
        }
        nodes.push_back(it->second);
      }
      if (unknown == 1)
        warn_once("gres-node:" + *first_unknown, *n,
                  fmt::format("gres.conf names node {} that slurm.conf lacks; ignored", *first_unknown));
      else if (unknown > 1)
        warn_once("gres-node:" + n->value, *n,
                  fmt::format("gres.conf names {} nodes that slurm.conf lacks (first {}); ignored", unknown,
                              *first_unknown));
    } else {
      for (std::size_t i = 0; i < site.nodes.size(); ++i) nodes.push_back(i);
    }
    for (auto i : nodes) {
      const auto key = std::make_tuple(i, std::string(text::trim(name->value)), type);
      if (!counts.count(key)) {
        order.push_back(key);
        where.emplace(key, *name);
      }
      counts[key] += count;
    }
  }
  std::map<std::size_t, std::string> refused_nodes;  // node index -> why slurmctld refuses it
  for (const auto& key : order) {
    const auto& [i, name, type] = key;
    auto& node = site.nodes[i];
    const auto count = counts[key];
    std::vector<NodeGres*> match;
    for (auto& g : node.gres)
      if (g.name == name && (type.empty() || g.type == type)) match.push_back(&g);
    const Pair& at = where.at(key);
    if (match.empty()) {
      if (count > 0) node.gres.push_back({name, type, count});
    } else if (match.size() == 1) {
      // slurmctld schedules the count slurm.conf configures (gres.c _node_config_validate sets
      // gres_cnt_avail to gres_cnt_config; excess devices are ignored); a node whose slurmd finds fewer
      // is refused at registration (INVALID_REG, drained) unless the version's override holds.
      const auto configured = match.front()->count;
      const bool refused = count < configured && check == GresCheck::kRefuseLow;
      if (configured != count)
        warn_once(
            fmt::format("gres-count:{}:{}:{}", name, type, configured), at,
            fmt::format("gres.conf gives {} {} on {} (and others alike) where slurm.conf configures {}: {}",
                        count, name, node.name, configured,
                        count > configured ? "slurm.conf's count is scheduled, the excess ignored"
                        : refused          ? "slurmctld refuses such a node's registration (INVALID_REG, "
                                             "drained from the start: it runs no job)"
                                           : "slurm.conf's count is scheduled (the site's Slurm keeps "
                                             "such a node: config_overrides, FastSchedule or a front end)"));
      if (refused)  // the first reason per node, as slurmctld's reason_down
        refused_nodes.emplace(i, fmt::format("gres/{} count reported lower than configured ({} < {})", name,
                                             count, configured));
    } else {
      warn_once("gres-ambiguous:" + node.name + ":" + name, at,
                fmt::format("untyped gres.conf line for {} on {} matches several typed GRES; ignored", name,
                            node.name));
    }
  }
  // Out of service from before any trace (start 0) to the end, ahead of the sacctmgr events.
  std::vector<NodeOutage> out;
  for (const auto& [i, reason] : refused_nodes)
    out.push_back({site.nodes[i].name, 0, kUnlimited, "DRAIN", reason});
  site.outages.insert(site.outages.begin(), out.begin(), out.end());
}

void import_gres_conf(const std::string& path, Site& site, std::vector<std::string>& warnings,
                      GresCheck check) {
  apply_gres_conf(read_input_file(path), path, site, warnings, check);
}

}  // namespace slurmtwin
