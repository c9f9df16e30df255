#include "experiments/sweep/sweep_spec.hpp"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <limits>
#include <numeric>
#include <set>
#include <stdexcept>

#include "experiments/replay/yaml_reader.hpp"
#include "experiments/sweep/sweep_sobol.hpp"
#include "traces/default_site.hpp"
#include "traces/did_you_mean.hpp"
#include "traces/file_io.hpp"
#include "traces/memory_guard.hpp"
#include "traces/read_report.hpp"
#include "traces/rng.hpp"
#include "traces/site_settings.hpp"
#include "traces/time_format.hpp"

namespace slurmtwin::experiments {
namespace {

/// The sweepable setting of the one table (traces/site_settings.hpp) named exactly `name`, or nullptr.
const SiteSetting* plain_setting(const std::string& name) {
  const auto* st = find_site_setting(name);
  return st && st->sweepable && st->name == name ? st : nullptr;
}

constexpr std::string_view kTresPrefix = "PriorityWeightTRES/";

/// "QOS/<name>/Priority" -> name ("" when not of that form).
std::string qos_of(const std::string& setting) {
  constexpr std::string_view kPrefix = "QOS/", kSuffix = "/Priority";
  if (setting.size() <= kPrefix.size() + kSuffix.size() || !setting.starts_with(kPrefix) ||
      !setting.ends_with(kSuffix))
    return "";
  return setting.substr(kPrefix.size(), setting.size() - kPrefix.size() - kSuffix.size());
}

/// "Licenses/<name>" -> name ("" when not of that form): the count of one of the site's licences.
std::string license_of(const std::string& setting) {
  constexpr std::string_view kPrefix = "Licenses/";
  return setting.size() > kPrefix.size() && setting.starts_with(kPrefix) ? setting.substr(kPrefix.size())
                                                                         : "";
}

/// The index in Site::licenses of the licence a Licenses/<name> setting names; throws when the site
/// has none of that name.
std::size_t license_index(const Site& site, const std::string& setting, const std::string& name) {
  const auto* lic = site.find_license(name);
  if (lic == nullptr)
    throw std::invalid_argument(fmt::format("{}: the site has no licence '{}' (Licenses=)", setting, name));
  return static_cast<std::size_t>(lic - site.licenses.data());
}

std::uint32_t to_u32(const std::string& name, double v) {
  if (!(v >= 0) || v > std::numeric_limits<std::uint32_t>::max())
    throw std::invalid_argument(fmt::format("{}: value {} out of range", name, v));
  return static_cast<std::uint32_t>(std::llround(v));
}

/// A YamlReader whose numbers may also be written as booleans (true/yes = 1, false/no = 0), as
/// slurm.conf's PriorityFavorSmall values are.
class SpecReader : public YamlReader {
 public:
  using YamlReader::YamlReader;
  double number(const YAML::Node& n, std::string_view key) const {
    if (!n.IsScalar()) fail(n, key, "bad type: expected a number");
    const auto& s = n.Scalar();
    if (s == "true" || s == "yes" || s == "True" || s == "YES" || s == "Yes") return 1;
    if (s == "false" || s == "no" || s == "False" || s == "NO" || s == "No") return 0;
    try {
      std::size_t used = 0;
      const double v = std::stod(s, &used);
      if (used != s.size() || !std::isfinite(v))
        fail(n, key, fmt::format("bad type: '{}' is not a number", s));
      return v;
    } catch (const std::logic_error&) {
      fail(n, key, fmt::format("bad type: '{}' is not a number", s));
    }
  }
};

double level(const SweepParameter& p, double u) {  // u in [0, 1] -> value
  if (p.scale == SweepScale::kLog) return std::exp(std::log(p.lo) + u * (std::log(p.hi) - std::log(p.lo)));
  return p.lo + u * (p.hi - p.lo);
}

double finish(const SweepParameter& p, double v) {
  return p.integer ? std::round(v) : v;
}

std::vector<double> grid_levels(const SweepParameter& p) {
  if (!p.values.empty()) return p.values;
  std::vector<double> out;
  for (std::uint32_t i = 0; i < p.count; ++i)
    out.push_back(finish(p, p.count == 1 ? p.lo : level(p, static_cast<double>(i) / (p.count - 1))));
  return out;
}

}  // namespace

double parameter_value(const SweepParameter& p, double u) {
  if (!p.values.empty()) {
    const auto n = p.values.size();
    return p.values[std::min(n - 1, static_cast<std::size_t>(u * static_cast<double>(n)))];
  }
  return finish(p, level(p, u));
}

bool bounds_above(ConstraintOp op) {
  return op == ConstraintOp::kLess || op == ConstraintOp::kLessEqual;
}

std::uint64_t fnv1a64(std::string_view bytes, std::uint64_t hash) {
  for (unsigned char c : bytes) {
    hash ^= c;
    hash *= 0x100000001b3ull;
  }
  return hash;
}

bool setting_is_known(const std::string& name, bool& integer) {
  if (plain_setting(name)) {
    integer = true;  // counts, seconds, minutes and 0/1 flags
    return true;
  }
  if (name.starts_with(kTresPrefix) && name.size() > kTresPrefix.size()) {
    integer = false;
    return true;
  }
  if (!qos_of(name).empty() || !license_of(name).empty()) {
    integer = true;
    return true;
  }
  return false;
}

void apply_setting(Site& site, const std::string& name, double value) {
  auto& s = site.scheduler;
  if (const auto* st = plain_setting(name)) {
    // In slurm.conf's unit (bf_window: minutes), rounded; a flag is on for any non-zero value.
    if (!std::isfinite(value) || std::abs(value) > 1e15)
      throw std::invalid_argument(fmt::format("{}: value {} out of range", name, value));
    const std::int64_t v = st->kind == SettingKind::kFlag ? (value != 0 ? 1 : 0) : std::llround(value);
    try {
      set_site_setting(s, *st, v * st->scale);
    } catch (const std::invalid_argument& e) {
      throw std::invalid_argument(fmt::format("{}: {}", name, e.what()));
    }
  } else if (name.starts_with(kTresPrefix) && name.size() > kTresPrefix.size()) {
    if (!(value >= 0) || !std::isfinite(value))
      throw std::invalid_argument(fmt::format("{}: value {} out of range", name, value));
    std::string tres = name.substr(kTresPrefix.size());
    std::transform(tres.begin(), tres.end(), tres.begin(), [](unsigned char c) { return std::tolower(c); });
    s.weight_tres[tres] = value;
  } else if (const auto q = qos_of(name); !q.empty()) {
    const auto it = std::find_if(site.qos.begin(), site.qos.end(), [&](const Qos& x) { return x.name == q; });
    if (it == site.qos.end())
      throw std::invalid_argument(fmt::format("{}: the site has no QOS '{}'", name, q));
    it->priority = to_u32(name, value);
  } else if (const auto l = license_of(name); !l.empty()) {
    // How many the site has: a job asking more is refused at submit, as slurmctld refuses it.
    const auto k = license_index(site, name, l);
    const auto count = to_u32(name, value);
    if (count > kMaxLicenseCount)
      throw std::invalid_argument(fmt::format("{}: value {} out of range", name, value));
    site.licenses[k].count = count;
  } else {
    throw std::invalid_argument(fmt::format("unknown sweep setting '{}'", name));
  }
}

double current_setting(const Site& site, const std::string& name) {
  if (const auto* st = plain_setting(name)) {
    const auto v = st->get(site.scheduler);
    return st->kind == SettingKind::kFlag ? (v != 0 ? 1.0 : 0.0)
                                          : static_cast<double>(v) / static_cast<double>(st->scale);
  }
  if (name.starts_with(kTresPrefix) && name.size() > kTresPrefix.size()) {
    std::string tres = name.substr(kTresPrefix.size());
    std::transform(tres.begin(), tres.end(), tres.begin(), [](unsigned char c) { return std::tolower(c); });
    const auto it = site.scheduler.weight_tres.find(tres);
    return it == site.scheduler.weight_tres.end() ? 0.0 : it->second;
  }
  if (const auto q = qos_of(name); !q.empty()) {
    const auto it = std::find_if(site.qos.begin(), site.qos.end(), [&](const Qos& x) { return x.name == q; });
    if (it == site.qos.end())
      throw std::invalid_argument(fmt::format("{}: the site has no QOS '{}'", name, q));
    return it->priority;
  }
  if (const auto l = license_of(name); !l.empty()) return site.licenses[license_index(site, name, l)].count;
  throw std::invalid_argument(fmt::format("unknown sweep setting '{}'", name));
}

std::string point_json(const SweepPoint& point) {
  std::string out = "{";
  for (const auto& [name, value] : point)
    out += fmt::format("{}\"{}\": {:.17g}", out.size() > 1 ? ", " : "", name, value);
  return out + "}";
}

std::string_view setting_unit(const std::string& name) {
  // The one table's unit; none on an axis of flags (0/1).
  const auto* st = plain_setting(name);
  return st && st->kind != SettingKind::kFlag ? setting_unit(*st) : "";
}

void apply_point(Site& site, const SweepPoint& point) {
  for (const auto& [name, value] : point) apply_setting(site, name, value);
}

void parse_trace_section(const YamlReader& r, const YAML::Node& trace, SweepSpec& spec, bool window_allowed) {
  if (trace.IsScalar()) {
    spec.trace_paths.push_back(r.path(trace, "trace"));
    return;
  }
  auto keys = std::set<std::string>{"path", "paths", "format", "users_from", "synthetic"};
  if (window_allowed) keys.emplace("window");
  r.check_map(trace, "trace", keys);
  if (trace["path"]) spec.trace_paths.push_back(r.path(trace["path"], "path"));
  if (const auto paths = trace["paths"]; paths) {
    if (!paths.IsSequence()) r.fail(paths, "paths", "expected a list of files");
    for (const auto& p : paths) spec.trace_paths.push_back(r.path(p, "paths"));
  }
  if (trace["format"]) spec.trace_format = r.str(trace["format"], "format");
  if (trace["users_from"]) spec.users_from = r.path(trace["users_from"], "users_from");
  if (const auto syn = trace["synthetic"]; syn) {
    if (!spec.trace_paths.empty()) r.fail(syn, "synthetic", "give either trace files or synthetic, not both");
    r.check_map(syn, "synthetic", {"seed", "days"});
    if (syn["seed"]) spec.synthetic_seed = r.unsigned_int(syn["seed"], "seed");
    if (syn["days"]) {
      spec.synthetic_days = r.number(syn["days"], "days");
      if (!(spec.synthetic_days > 0) || spec.synthetic_days > 3660)
        r.fail(syn["days"], "days", "expected a number of days in (0, 3660]");
    }
  }
  if (const auto window = trace["window"]; window) {
    r.check_map(window, "window", {"from", "to"});
    spec.window_line = r.line_of(window);
    const auto bound = [&](const char* key) {
      const auto node = window[key];
      if (!node) return WindowBound{};
      const auto text = r.str(node, key);
      const auto b = parse_window_bound(text);
      if (!b) r.fail(node, key, fmt::format("'{}': expected {}", text, kWindowBoundForms));
      return *b;
    };
    spec.window_from = bound("from");
    spec.window_to = bound("to");
    if (const auto problem = window_problem(spec.window_from, spec.window_to); !problem.empty())
      r.fail(window, "window", problem);
  }
}

void parse_site_section(const YamlReader& r, const YAML::Node& site, SweepSpec& spec) {
  if (site.IsScalar()) {
    spec.site_yaml = r.path(site, "site");
    return;
  }
  // key -> the file it names: one table for sweep specs and check files
  auto& f = spec.site_files;
  const std::pair<const char*, std::string*> files[] = {
      {"yaml", &spec.site_yaml},
      {"slurm_conf", &f.cluster.slurm_conf},
      {"scontrol_config", &f.cluster.scontrol_config},
      {"scontrol_nodes", &f.cluster.scontrol_nodes},
      {"scontrol_partitions", &f.cluster.scontrol_partitions},
      {"gres_conf", &f.cluster.gres_conf},
      {"topology_conf", &f.cluster.topology_conf},
      {"qos_dump", &f.qos_table},
      {"sacctmgr", &f.sacctmgr_script},
      {"sacctmgr_dump", &f.sacctmgr_dump},
      {"assoc_dump", &f.assoc_table},
      {"reservations", &f.reservations},
      {"node_events", &f.node_events}};
  std::set<std::string> keys{"default_cpu_nodes", "slurm_version"};
  for (const auto& [key, field] : files) keys.emplace(key);
  r.check_map(site, "site", keys);
  for (const auto& [key, field] : files)
    if (site[key]) *field = r.path(site[key], key);
  if (site["slurm_version"]) {
    f.cluster.slurm_version = r.str(site["slurm_version"], "slurm_version");
    try {
      parse_slurm_version(f.cluster.slurm_version);
    } catch (const std::invalid_argument& e) {
      r.fail(site["slurm_version"], "slurm_version", e.what());
    }
  }
  if (site["default_cpu_nodes"]) {
    const auto n = r.unsigned_int(site["default_cpu_nodes"], "default_cpu_nodes");
    if (n == 0 || n > kMaxDefaultCpuNodes)
      r.fail(site["default_cpu_nodes"], "default_cpu_nodes",
             fmt::format("expected 1..{}", kMaxDefaultCpuNodes));
    spec.default_cpu_nodes = static_cast<std::uint32_t>(n);
  }
  const bool imported = !f.cluster.slurm_conf.empty() || !f.cluster.scontrol_config.empty();
  if (!spec.site_yaml.empty() && imported)
    r.fail(site, "site", "give either yaml or the site's files (slurm_conf, scontrol_config), not both");
  if (!imported && !f.paths().empty())
    r.fail(site, "site", "the site's files need slurm_conf or scontrol_config (the cluster's configuration)");
  if (!f.sacctmgr_script.empty() + !f.sacctmgr_dump.empty() + !f.assoc_table.empty() > 1)
    r.fail(site, "site", "give the associations one way: sacctmgr, sacctmgr_dump or assoc_dump");
}

SweepSpec parse_sweep_spec(const std::string& content, const std::string& file_name) {
  SweepSpec spec;
  spec.file = file_name;
  SpecReader r(file_name);
  YAML::Node root;
  try {
    root = YAML::Load(content);
  } catch (const YAML::Exception& e) {
    throw InputError(file_name, static_cast<std::uint64_t>(std::max(e.mark.line + 1, 0)), "", e.msg);
  }
  r.check_map(root, "sweep spec",
              {"site", "trace", "parameters", "design", "objectives", "constraints", "job_waits",
               "replicates", "current_settings"});

  if (const auto site = root["site"]; site) parse_site_section(r, site, spec);

  if (const auto trace = root["trace"]; trace) parse_trace_section(r, trace, spec, /*window_allowed=*/true);

  const auto params = root["parameters"];
  if (!params) r.fail(root, "parameters", "a sweep needs parameters");
  if (!params.IsMap() || params.size() == 0)
    r.fail(params, "parameters", "expected a non-empty map of settings");
  for (const auto& kv : params) {
    SweepParameter p;
    p.name = r.key(kv.first, "parameters");
    p.line = r.line_of(kv.first);
    if (!setting_is_known(p.name, p.integer))
      r.fail(kv.first, p.name, "unknown setting (see docs/sweeps.md for the settings a sweep may vary)");
    const auto& body = kv.second;
    if (body.IsSequence()) {  // shorthand: NAME: [v1, v2]
      for (const auto& v : body) p.values.push_back(r.number(v, p.name));
      if (p.values.empty()) r.fail(body, p.name, "empty list of values");
    } else {
      r.check_map(body, p.name, {"values", "range", "scale", "count"});
      if (body["values"] && body["range"]) r.fail(body, p.name, "give either values or range, not both");
      if (const auto values = body["values"]; values) {
        if (!values.IsSequence()) r.fail(values, p.name, "values: expected a list");
        for (const auto& v : values) p.values.push_back(r.number(v, p.name));
        if (p.values.empty()) r.fail(values, p.name, "empty list of values");
        if (body["scale"] || body["count"]) r.fail(body, p.name, "scale and count go with range, not values");
      } else if (const auto range = body["range"]; range) {
        if (!range.IsSequence() || range.size() != 2) r.fail(range, p.name, "range: expected [lo, hi]");
        p.lo = r.number(range[0], p.name);
        p.hi = r.number(range[1], p.name);
        if (!(p.lo < p.hi))
          r.fail(range, p.name, fmt::format("empty range [{}, {}]: need lo < hi", p.lo, p.hi));
        if (p.lo < 0) r.fail(range, p.name, "range: settings are non-negative");
        if (const auto scale = body["scale"]; scale) {
          const auto s = r.str(scale, p.name);
          if (s == "log")
            p.scale = SweepScale::kLog;
          else if (s != "linear")
            r.fail(scale, p.name, fmt::format("scale '{}': expected linear or log", s));
        }
        if (p.scale == SweepScale::kLog && !(p.lo > 0)) r.fail(range, p.name, "log scale needs lo > 0");
        if (const auto count = body["count"]; count) {
          const auto c = r.unsigned_int(count, p.name);
          if (c == 0 || c > 1'000'000) r.fail(count, p.name, "count: expected 1..1000000");
          p.count = static_cast<std::uint32_t>(c);
        }
      } else {
        r.fail(body, p.name, "expected values: [...] or range: [lo, hi]");
      }
    }
    if (p.integer) {
      for (const auto v : p.values)
        if (v != std::floor(v) || v < 0)
          r.fail(body, p.name, fmt::format("bad type: {} is not a non-negative integer", v));
    } else {
      for (const auto v : p.values)
        if (v < 0) r.fail(body, p.name, fmt::format("{} is negative", v));
    }
    for (const auto& other : spec.parameters)
      if (other.name == p.name) r.fail(kv.first, p.name, "setting given twice");
    spec.parameters.push_back(std::move(p));
  }

  if (const auto design = root["design"]; design) {
    r.check_map(design, "design", {"type", "points", "seed", "scramble"});
    if (design["type"]) {
      const auto t = r.str(design["type"], "type");
      if (t == "grid")
        spec.design = SweepDesign::kGrid;
      else if (t == "random")
        spec.design = SweepDesign::kRandom;
      else if (t == "lhs")
        spec.design = SweepDesign::kLhs;
      else if (t == "sobol")
        spec.design = SweepDesign::kSobol;
      else
        r.fail(design["type"], "type", fmt::format("design '{}': expected grid, random, lhs or sobol", t));
    }
    if (design["points"]) {
      const auto n = r.unsigned_int(design["points"], "points");
      if (n == 0 || n > 10'000'000) r.fail(design["points"], "points", "expected 1..10000000");
      spec.points = static_cast<std::uint32_t>(n);
    }
    if (design["seed"]) spec.seed = r.unsigned_int(design["seed"], "seed");
    if (design["scramble"]) {
      if (spec.design != SweepDesign::kSobol) r.fail(design["scramble"], "scramble", "scramble is for sobol");
      spec.scramble = r.number(design["scramble"], "scramble") != 0;
    }
    if (spec.design != SweepDesign::kGrid && spec.points == 0)
      r.fail(design, "points", "random, lhs and sobol designs need points");
    if (spec.design == SweepDesign::kSobol && spec.parameters.size() > kSobolMaxDimensions)
      r.fail(design["type"], "type",
             fmt::format("sobol: {} parameters; the built-in direction numbers cover {}",
                         spec.parameters.size(), kSobolMaxDimensions));
    if (spec.design == SweepDesign::kGrid && design["points"])
      r.fail(design["points"], "points",
             "a grid's size comes from its parameters; points is for random/lhs/sobol");
  }
  if (spec.design == SweepDesign::kGrid)
    for (const auto& p : spec.parameters)
      if (p.values.empty() && p.count == 0)
        throw InputError(file_name, p.line, p.name, "a grid needs count for a range");
  if (spec.design == SweepDesign::kGrid) {  // same cap as random/lhs points: beyond it memory runs out
    constexpr std::uint64_t kMaxGridPoints = 10'000'000;
    std::uint64_t points = 1;
    for (const auto& p : spec.parameters) {
      points *= p.values.empty() ? p.count : p.values.size();
      if (points > kMaxGridPoints)
        throw InputError(
            file_name, p.line, p.name,
            fmt::format("the grid has more than {} points (product of the levels)", kMaxGridPoints));
    }
  }

  const auto objectives = root["objectives"];
  if (!objectives) r.fail(root, "objectives", "a sweep needs objectives");
  if (!objectives.IsSequence() || objectives.size() == 0)
    r.fail(objectives, "objectives", "expected a non-empty list of {metric, goal}");
  for (const auto& o : objectives) {
    r.check_map(o, "objectives", {"metric", "goal"});
    if (!o["metric"]) r.fail(o, "metric", "an objective needs a metric");
    SweepObjective obj;
    obj.metric = r.str(o["metric"], "metric");
    obj.line = r.line_of(o["metric"]);
    if (!metric_is_known(obj.metric))
      r.fail(o["metric"], "metric", fmt::format("unknown metric '{}'", obj.metric));
    if (o["goal"]) {
      const auto g = r.str(o["goal"], "goal");
      if (g == "max")
        obj.goal = Goal::kMax;
      else if (g != "min")
        r.fail(o["goal"], "goal", fmt::format("goal '{}': expected min or max", g));
    }
    for (const auto& other : spec.objectives)
      if (other.metric == obj.metric) r.fail(o, "metric", "objective given twice");
    spec.objectives.push_back(std::move(obj));
  }

  if (const auto constraints = root["constraints"]; constraints) {
    if (!constraints.IsSequence())
      r.fail(constraints, "constraints", "expected a list of \"METRIC OP NUMBER\" (e.g. fairness >= 0.8)");
    for (const auto& c : constraints) {
      SweepConstraint con;
      try {
        con = parse_constraint(r.str(c, "constraints"));
      } catch (const std::invalid_argument& e) {
        r.fail(c, "constraints", e.what());
      }
      con.line = r.line_of(c);
      spec.constraints.push_back(std::move(con));
    }
  }
  if (const auto waits = root["job_waits"]; waits) spec.job_waits = r.number(waits, "job_waits") != 0;
  if (const auto cur = root["current_settings"]; cur)
    spec.current_settings = r.number(cur, "current_settings") != 0;
  if (const auto rep = root["replicates"]; rep) {
    const auto n = r.unsigned_int(rep, "replicates");
    if (n == 0 || n > kMaxReplicates)
      r.fail(rep, "replicates", fmt::format("expected 1..{} replays per point", kMaxReplicates));
    spec.replicates = static_cast<std::uint32_t>(n);
  }
  return spec;
}

SweepSpec load_sweep_spec(const std::string& path) {
  return parse_sweep_spec(read_input_file(path), path);
}

std::uint64_t design_size(const SweepSpec& spec) {
  if (spec.design != SweepDesign::kGrid) return spec.points;
  std::uint64_t points = 1;
  for (const auto& p : spec.parameters) points *= p.values.empty() ? p.count : p.values.size();
  return points;
}

std::vector<SweepPoint> design_points(const SweepSpec& spec) {
  const auto& ps = spec.parameters;
  // Each point is a map of the settings (a node per setting), held three times at the peak (the raw
  // design, the set that removes duplicates, the result): a 10^7-point design needs several GiB.
  const auto size = design_size(spec);
  require_memory(size * 3 * (64 + 96 * ps.size()), fmt::format("the design's {} points", size));
  std::vector<SweepPoint> raw;
  if (spec.design == SweepDesign::kGrid) {
    std::vector<std::vector<double>> levels;
    for (const auto& p : ps) levels.push_back(grid_levels(p));
    std::vector<std::size_t> idx(ps.size(), 0);
    while (true) {
      SweepPoint point;
      for (std::size_t d = 0; d < ps.size(); ++d) point[ps[d].name] = levels[d][idx[d]];
      raw.push_back(std::move(point));
      std::size_t d = ps.size();  // odometer: the last parameter varies fastest
      while (d > 0 && ++idx[d - 1] == levels[d - 1].size()) idx[--d] = 0;
      if (d == 0) break;
    }
  } else {
    Rng rng(spec.seed);
    const std::size_t n = spec.points;
    std::vector<std::vector<double>> columns(ps.size());
    for (std::size_t d = 0; d < ps.size(); ++d) {
      auto& col = columns[d];
      if (spec.design == SweepDesign::kRandom) {
        for (std::size_t i = 0; i < n; ++i) col.push_back(parameter_value(ps[d], rng.uniform()));
      } else if (spec.design == SweepDesign::kSobol) {
        continue;  // filled below, point by point
      } else {
        std::vector<std::size_t> strata(n);
        std::iota(strata.begin(), strata.end(), std::size_t{0});
        for (std::size_t i = n; i > 1; --i) std::swap(strata[i - 1], strata[rng.below(i)]);  // Fisher-Yates
        for (std::size_t i = 0; i < n; ++i)
          col.push_back(parameter_value(
              ps[d], (static_cast<double>(strata[i]) + rng.uniform()) / static_cast<double>(n)));
      }
    }
    if (spec.design == SweepDesign::kSobol) {
      // A distinct nonzero shift seed per design seed; 0 = the plain sequence.
      SobolSequence sobol(ps.size(), spec.scramble ? spec.seed + 1 : 0);
      for (std::size_t i = 0; i < n; ++i) {
        const auto u = sobol.next();
        for (std::size_t d = 0; d < ps.size(); ++d) columns[d].push_back(parameter_value(ps[d], u[d]));
      }
    }
    for (std::size_t i = 0; i < n; ++i) {
      SweepPoint point;
      for (std::size_t d = 0; d < ps.size(); ++d) point[ps[d].name] = columns[d][i];
      raw.push_back(std::move(point));
    }
  }
  std::vector<SweepPoint> out;
  std::set<SweepPoint> seen;
  for (auto& p : raw)
    if (seen.insert(p).second) out.push_back(std::move(p));
  return out;
}

namespace {

/// Splits "wait_mean@partition:gpu" into base, group kind and group name.
bool split_metric(const std::string& metric, std::string& base, std::string& kind, std::string& group) {
  const auto at = metric.find('@');
  base = metric.substr(0, at);
  kind.clear();
  group.clear();
  if (at == std::string::npos) return true;
  const auto colon = metric.find(':', at);
  if (colon == std::string::npos || colon + 1 == metric.size()) return false;
  kind = metric.substr(at + 1, colon - at - 1);
  group = metric.substr(colon + 1);
  return kind == "partition" || kind == "account" || kind == "qos";
}

const std::set<std::string> kWaitMetrics = {"wait_mean", "wait_median", "wait_p90",  "wait_p95",
                                            "wait_p99",  "wait_max",    "bsld_mean", "jobs_started"};
const std::set<std::string> kGlobalMetrics = {"utilisation", "memory_utilisation", "gpu_utilisation",
                                              "preemptions", "mean_queue_length",  "never_started",
                                              "fairness"};
// The twin against the starts the trace recorded (a sacct dump): mean |simulated - recorded start| (s)
// and the relative error of the mean wait.
const std::set<std::string> kHistoryMetrics = {"start_error_mean", "wait_mean_deviation"};
// Read from the replay's time series (sim::TimeSeriesRecorder), not from its jobs.
const std::set<std::string> kSeriesMetrics = {"memory_utilisation", "gpu_utilisation", "mean_queue_length"};

}  // namespace

bool metric_is_known(const std::string& metric) {
  std::string base, kind, group;
  if (!split_metric(metric, base, kind, group)) return false;
  if (kWaitMetrics.count(base)) return true;
  if (kHistoryMetrics.count(base)) return kind != "account";  // kept per partition and per QOS
  if (base == "preemptions") return kind != "account";        // counted per partition and per QOS
  return kind.empty() && kGlobalMetrics.count(base) > 0;
}

bool metric_reads_series(const std::string& metric) {
  std::string base, kind, group;
  split_metric(metric, base, kind, group);
  return kSeriesMetrics.count(base) > 0;
}

std::string_view metric_unit(const std::string& metric) {
  std::string base, kind, group;
  split_metric(metric, base, kind, group);
  if (base == "wait_mean_deviation") return "";  // relative: (simulated - recorded) / recorded
  return base.starts_with("wait_") || base == "start_error_mean" ? "s" : "";
}

TimeUnit readable_time_unit(double typical_seconds) {
  const double t = std::abs(typical_seconds);
  if (t >= 2 * 86400) return {"d", 86400};
  if (t >= 2 * 3600) return {"h", 3600};
  if (t >= 2 * 60) return {"min", 60};
  return {"s", 1};
}

std::string_view goal_arrow(Goal goal) {
  return goal == Goal::kMin ? "↓" : "↑";
}

void check_metric_group(const std::string& metric, const Site& site, const std::string& file,
                        std::uint64_t line) {
  std::string base, kind, group;
  if (!split_metric(metric, base, kind, group)) return;
  // A site without GPUs has no GPU utilisation (-1 at every point): a constant, never a goal.
  if (base == "gpu_utilisation" && std::none_of(site.nodes.begin(), site.nodes.end(), [](const Node& n) {
        return std::any_of(n.gres.begin(), n.gres.end(), [](const NodeGres& g) { return g.name == "gpu"; });
      }))
    throw InputError(file, line, "metric", fmt::format("'{}': the site's nodes have no GPUs", metric));
  if (kind.empty()) return;
  std::vector<std::string_view> names;
  if (kind == "partition")
    for (const auto& p : site.partitions) names.push_back(p.name);
  else if (kind == "account")
    for (const auto& a : site.accounts) names.push_back(a.name);
  else
    for (const auto& q : site.qos) names.push_back(q.name);
  if (std::find(names.begin(), names.end(), group) != names.end()) return;
  const auto near = nearest_name(names, group);
  throw InputError(file, line, "metric",
                   fmt::format("'{}': the site has no {} '{}'{}", metric, kind == "qos" ? "QOS" : kind, group,
                               near.empty() ? "" : fmt::format(" (did you mean {}?)", near)));
}

void check_metric_groups(const SweepSpec& spec, const Site& site) {
  for (const auto& o : spec.objectives) check_metric_group(o.metric, site, spec.file, o.line);
  for (const auto& c : spec.constraints) check_metric_group(c.metric, site, spec.file, c.line);
}

double fairness_index(const sim::ReplayMetrics& m) {
  double distance = 0;
  for (const auto& [account, shares] : m.fairness) distance += std::abs(shares.first - shares.second);
  return std::clamp(1.0 - distance / 2, 0.0, 1.0);
}

const char* to_string(ConstraintOp op) {
  switch (op) {
    case ConstraintOp::kLess:
      return "<";
    case ConstraintOp::kLessEqual:
      return "<=";
    case ConstraintOp::kGreater:
      return ">";
    case ConstraintOp::kGreaterEqual:
      return ">=";
  }
  return "?";
}

bool constraint_holds(const SweepConstraint& c, double value) {
  if (std::isnan(value)) return false;
  switch (c.op) {
    case ConstraintOp::kLess:
      return value < c.bound;
    case ConstraintOp::kLessEqual:
      return value <= c.bound;
    case ConstraintOp::kGreater:
      return value > c.bound;
    case ConstraintOp::kGreaterEqual:
      return value >= c.bound;
  }
  return false;
}

SweepConstraint parse_constraint(const std::string& text) {
  const auto pos = text.find_first_of("<>");
  if (pos == std::string::npos)
    throw std::invalid_argument(
        fmt::format("'{}': expected METRIC OP NUMBER with OP one of <=, <, >=, >", text));
  SweepConstraint c;
  const bool less = text[pos] == '<';
  const bool equal = pos + 1 < text.size() && text[pos + 1] == '=';
  c.op = less ? (equal ? ConstraintOp::kLessEqual : ConstraintOp::kLess)
              : (equal ? ConstraintOp::kGreaterEqual : ConstraintOp::kGreater);
  const auto trim = [](const std::string& s) {
    const auto b = s.find_first_not_of(" \t");
    const auto e = s.find_last_not_of(" \t");
    return b == std::string::npos ? std::string() : s.substr(b, e - b + 1);
  };
  c.metric = trim(text.substr(0, pos));
  const auto number = trim(text.substr(pos + (equal ? 2 : 1)));
  if (!metric_is_known(c.metric)) throw std::invalid_argument(fmt::format("unknown metric '{}'", c.metric));
  std::size_t used = 0;
  try {
    c.bound = std::stod(number, &used);
  } catch (const std::logic_error&) {
    used = 0;
  }
  if (number.empty() || used != number.size() || !std::isfinite(c.bound))
    throw std::invalid_argument(fmt::format("bad type: bound '{}' is not a number", number));
  c.text = fmt::format("{} {} {}", c.metric, to_string(c.op), number);
  return c;
}

double metric_value(const sim::ReplayMetrics& m, const std::string& metric) {
  std::string base, kind, group;
  if (!split_metric(metric, base, kind, group) || !metric_is_known(metric))
    throw std::invalid_argument(fmt::format("unknown metric '{}'", metric));
  if (base == "utilisation") return m.utilisation;
  if (base == "memory_utilisation") return m.memory_utilisation;
  if (base == "gpu_utilisation") return m.gpu_utilisation;
  if (base == "fairness") return fairness_index(m);
  if (base == "preemptions") {
    if (kind.empty()) return static_cast<double>(m.preemptions);
    const auto& table = kind == "partition" ? m.preemptions_by_partition : m.preemptions_by_qos;
    const auto it = table.find(group);
    return it == table.end() ? 0.0 : static_cast<double>(it->second);
  }
  if (base == "mean_queue_length") return m.mean_queue_length;
  if (kHistoryMetrics.count(base)) {
    if (!m.has_fidelity)
      throw std::invalid_argument(fmt::format(
          "metric '{}' compares with recorded starts: the trace has none (a sacct dump has them)", metric));
    const auto& f = m.fidelity;
    sim::GroupFidelity g{f.jobs, f.start_error_mean_abs, f.recorded_mean_wait, f.simulated_mean_wait,
                         f.mean_wait_deviation};
    if (!kind.empty()) {
      const auto& table = kind == "partition" ? f.by_partition : f.by_qos;
      const auto it = table.find(group);
      g = it == table.end() ? sim::GroupFidelity{} : it->second;
    }
    return base == "start_error_mean" ? g.start_error_mean_abs : g.mean_wait_deviation;
  }
  if (base == "never_started") return static_cast<double>(m.never_started);
  sim::WaitStats w = m.overall;
  if (!kind.empty()) {
    const auto& table = kind == "partition" ? m.by_partition : kind == "account" ? m.by_account : m.by_qos;
    const auto it = table.find(group);
    w = it == table.end() ? sim::WaitStats{} : it->second;
  }
  if (base == "wait_mean") return w.mean;
  if (base == "wait_median") return w.median;
  if (base == "wait_p90") return w.p90;
  if (base == "wait_p95") return w.p95;
  if (base == "wait_p99") return w.p99;
  if (base == "wait_max") return w.max;
  if (base == "bsld_mean") return w.mean_bsld;
  return static_cast<double>(w.jobs);  // jobs_started
}

std::vector<std::size_t> pareto_front(const std::vector<std::vector<double>>& rows,
                                      const std::vector<Goal>& goals) {
  const auto better_eq = [&](const std::vector<double>& a, const std::vector<double>& b, std::size_t k) {
    return goals[k] == Goal::kMin ? a[k] <= b[k] : a[k] >= b[k];
  };
  std::vector<std::size_t> front;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    bool dominated = false;
    for (std::size_t j = 0; j < rows.size() && !dominated; ++j) {
      if (i == j) continue;
      bool all = true, strict = false;
      for (std::size_t k = 0; k < goals.size(); ++k) {
        if (!better_eq(rows[j], rows[i], k))
          all = false;
        else if (rows[j][k] != rows[i][k])
          strict = true;
      }
      dominated = all && strict;
    }
    if (!dominated) front.push_back(i);
  }
  return front;
}

}  // namespace slurmtwin::experiments
