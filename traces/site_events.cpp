#include "traces/site_events.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <map>
#include <stdexcept>
#include <unordered_set>

#include "traces/csv.hpp"
#include "traces/hostlist.hpp"
#include "traces/input_limits.hpp"
#include "traces/read_report.hpp"
#include "traces/scontrol_show.hpp"
#include "traces/text.hpp"
#include "traces/time_format.hpp"

namespace slurmtwin {
namespace {

// A node list field (`n[1-4],m2`) expanded, or refused with file, line and field.
std::vector<std::string> node_names(const std::string& value, const std::string& file, std::uint64_t line,
                                    std::string_view field) {
  try {
    return expand_hostlist(value, kMaxSiteNodes);
  } catch (const std::invalid_argument& e) {
    throw InputError(file, line, std::string(field), e.what());
  }
}

struct FlagRow {
  std::string_view name;
  FlagModel model;
  std::string_view effect;  // of a flag that is not modelled
};

// Every flag reservation_flags_string (Slurm 22.05) prints. Replayed from the snapshot of one
// occurrence: creation-time choices (node picking, IGNORE_JOBS) are already in its node list.
constexpr std::array kFlags{
    FlagRow{"MAINT", FlagModel::kModelled, ""},
    FlagRow{"FLEX", FlagModel::kModelled, ""},
    FlagRow{"OVERLAP", FlagModel::kModelled, ""},
    FlagRow{"IGNORE_JOBS", FlagModel::kNoEffect, ""},
    FlagRow{"SPEC_NODES", FlagModel::kNoEffect, ""},
    FlagRow{"ALL_NODES", FlagModel::kNoEffect, ""},
    FlagRow{"PART_NODES", FlagModel::kNoEffect, ""},
    FlagRow{"STATIC", FlagModel::kNoEffect, ""},
    FlagRow{"NO_MAINT", FlagModel::kNoEffect, ""},
    FlagRow{"NO_HOURLY", FlagModel::kNoEffect, ""},
    FlagRow{"NO_DAILY", FlagModel::kNoEffect, ""},
    FlagRow{"NO_WEEKLY", FlagModel::kNoEffect, ""},
    FlagRow{"NO_ANY_NODES", FlagModel::kNoEffect, ""},
    FlagRow{"NO_STATIC", FlagModel::kNoEffect, ""},
    FlagRow{"NO_PART_NODES", FlagModel::kNoEffect, ""},
    FlagRow{"NO_MAGNETIC", FlagModel::kNoEffect, ""},
    FlagRow{"HOURLY", FlagModel::kNotModelled, "repeats: only the occurrence listed is replayed"},
    FlagRow{"DAILY", FlagModel::kNotModelled, "repeats: only the occurrence listed is replayed"},
    FlagRow{"WEEKDAY", FlagModel::kNotModelled, "repeats: only the occurrence listed is replayed"},
    FlagRow{"WEEKEND", FlagModel::kNotModelled, "repeats: only the occurrence listed is replayed"},
    FlagRow{"WEEKLY", FlagModel::kNotModelled, "repeats: only the occurrence listed is replayed"},
    FlagRow{"ANY_NODES", FlagModel::kNotModelled, "licenses and burst buffers are not modelled"},
    FlagRow{"FIRST_CORES", FlagModel::kNotModelled, "held as whole nodes, not cores"},
    FlagRow{"TIME_FLOAT", FlagModel::kNotModelled, "replayed at the times listed, not floating"},
    FlagRow{"REPLACE", FlagModel::kNotModelled, "nodes are not swapped as jobs take them"},
    FlagRow{"REPLACE_DOWN", FlagModel::kNotModelled, "down nodes are not swapped out"},
    FlagRow{"PURGE_COMP", FlagModel::kNotModelled, "not ended early when its jobs are done"},
    FlagRow{"NO_HOLD_JOBS_AFTER_END", FlagModel::kNotModelled,
            "its jobs still pending at its end are held (never start) as by default"},
    FlagRow{"MAGNETIC", FlagModel::kNotModelled, "jobs that do not ask for it are not drawn into it"},
};

/// "2026-11-25T21:00:00" in `zone` -> UTC; "Unknown" -> kUnlimited, for an end (never reached) only.
Seconds wall_time(std::string_view v, const TimeZone& zone, const std::string& file, std::uint64_t line,
                  const char* field) {
  if (text::iequals(v, "Unknown")) {
    if (std::string_view(field).find("End") != std::string_view::npos) return kUnlimited;  // EndTime, TimeEnd
    throw InputError(file, line, field, "Unknown: a start must be a time");
  }
  const auto t = parse_timestamp(v);
  if (!t || *t == kUnsetTime) throw InputError(file, line, field, fmt::format("'{}' is not a time", v));
  return zone.to_utc(*t).front();
}

/// Names of a Users=/Accounts= value: "(null)" or empty -> none.
std::vector<std::string> name_list(std::string_view v) {
  std::vector<std::string> out;
  if (v.empty() || v == "(null)") return out;
  for (const auto w : text::split(v, ','))
    if (!w.empty()) out.emplace_back(w);
  return out;
}

/// "MAINT,PURGE_COMP=00:05:00,SPEC_NODES": checked against kFlags; not-modelled ones warned about.
std::set<std::string> read_flags(std::string_view v, const std::string& name, const std::string& file,
                                 std::uint64_t line, std::vector<std::string>& warnings) {
  std::set<std::string> out;
  if (v.empty() || v == "(null)") return out;
  for (const auto w : text::split(v, ',')) {
    if (w.empty()) continue;
    const auto flag = text::to_upper(w.substr(0, w.find('=')));
    std::string effect;
    const auto model = reservation_flag_model(flag, &effect);
    if (!model) throw InputError(file, line, "Flags", fmt::format("unknown reservation flag '{}'", w));
    if (*model == FlagModel::kNotModelled)
      warnings.push_back(fmt::format("{}:{}: reservation '{}': flag {} is not modelled ({})", file, line,
                                     name, flag, effect));
    out.insert(flag);
  }
  return out;
}

std::vector<Reservation> read_scontrol(std::string_view content, const std::string& file,
                                       const TimeZone& zone, std::vector<std::string>& warnings) {
  std::vector<Reservation> out;
  for (const auto& rec : read_scontrol_records(content, file, "ReservationName")) {
    std::map<std::string, const ConfItem*> item;
    for (const auto& i : rec.items) item[i.key] = &i;
    const auto get = [&](const char* key) -> const ConfItem& {
      const auto it = item.find(key);
      if (it == item.end())
        throw InputError(file, rec.line, key, "missing in this `scontrol show reservation` record");
      return *it->second;
    };
    Reservation r;
    r.name = get("ReservationName").value;
    r.start = wall_time(get("StartTime").value, zone, file, get("StartTime").line, "StartTime");
    r.end = wall_time(get("EndTime").value, zone, file, get("EndTime").line, "EndTime");
    const auto& nodes = get("Nodes");
    if (nodes.value != "(null)" && !nodes.value.empty())
      r.nodes = node_names(nodes.value, file, nodes.line, "Nodes");
    r.users = name_list(get("Users").value);
    r.accounts = name_list(get("Accounts").value);
    const auto& flags = get("Flags");
    r.flags = read_flags(flags.value, r.name, file, flags.line, warnings);
    if (const auto g = item.find("Groups"); g != item.end() && g->second->value != "(null)")
      warnings.push_back(
          fmt::format("{}:{}: reservation '{}': Groups= is not modelled (no Unix groups): "
                      "its group members cannot use it",
                      file, g->second->line, r.name));
    if (const auto l = item.find("Licenses"); l != item.end() && l->second->value != "(null)")
      warnings.push_back(
          fmt::format("{}:{}: reservation '{}': Licenses={} is not modelled: its licences "
                      "stay free for every job",
                      file, l->second->line, r.name, l->second->value));
    if (item.count("CoreIDs") > 0)
      warnings.push_back(
          fmt::format("{}:{}: reservation '{}' holds some cores of its nodes (CoreCnt): "
                      "replayed as holding them whole",
                      file, rec.line, r.name));
    out.push_back(std::move(r));
  }
  return out;
}

std::vector<Reservation> read_sacctmgr(std::string_view content, const std::string& file,
                                       const TimeZone& zone, std::vector<std::string>& warnings) {
  std::vector<Reservation> out;
  csv::Reader reader(content, file, '|');
  csv::Record r;
  reader.next(r);
  const csv::Header h(r.fields);
  const auto c_name = h.require("Name", file, r.line), c_start = h.require("TimeStart", file, r.line),
             c_end = h.require("TimeEnd", file, r.line), c_nodes = h.require("NodeName", file, r.line);
  const auto c_flags = h.find("Flags"), c_id = h.find("ID"), c_tres = h.find("TRES");
  while (reader.next(r)) {
    if (r.fields.size() != h.size())
      throw InputError(file, r.line, "line",
                       fmt::format("{} fields, the header has {}", r.fields.size(), h.size()));
    Reservation res;
    res.name = r.fields[c_name];
    if (res.name.empty()) throw InputError(file, r.line, "Name", "empty");
    res.start = wall_time(r.fields[c_start], zone, file, r.line, "TimeStart");
    res.end = wall_time(r.fields[c_end], zone, file, r.line, "TimeEnd");
    if (!r.fields[c_nodes].empty()) res.nodes = node_names(r.fields[c_nodes], file, r.line, "NodeName");
    if (c_flags) res.flags = read_flags(r.fields[*c_flags], res.name, file, r.line, warnings);
    if (c_tres && r.fields[*c_tres].find("license/") != std::string::npos)
      warnings.push_back(
          fmt::format("{}:{}: reservation '{}': its licences ({}) are not modelled: they "
                      "stay free for every job",
                      file, r.line, res.name, r.fields[*c_tres]));
    if (c_id) {
      const auto id = text::parse_int(r.fields[*c_id]);
      if (!id || *id <= 0 || *id > 0xFFFFFFFF)
        throw InputError(file, r.line, "ID", fmt::format("'{}' is not a reservation id", r.fields[*c_id]));
      res.id = static_cast<std::uint32_t>(*id);
    }
    out.push_back(std::move(res));
  }
  return out;
}

}  // namespace

std::optional<FlagModel> reservation_flag_model(std::string_view flag, std::string* effect) {
  for (const auto& row : kFlags)
    if (row.name == flag) {
      if (effect) *effect = std::string(row.effect);
      return row.model;
    }
  return std::nullopt;
}

std::vector<Reservation> read_reservations(std::string_view content, const std::string& file_name,
                                           const TimeZone& zone, std::vector<std::string>& warnings) {
  csv::require_text(content, file_name,
                    "`scontrol show reservation` or `sacctmgr -P show reservation` output");
  const auto first = text::trim(content.substr(0, content.find('\n')));
  if (text::starts_with_i(first, "No reservations in the system")) return {};
  if (text::starts_with_i(first, "ReservationName="))
    return read_scontrol(content, file_name, zone, warnings);
  if (first.find('|') != std::string_view::npos) return read_sacctmgr(content, file_name, zone, warnings);
  throw InputError(file_name, 1, "header",
                   "expected `scontrol show reservation` (ReservationName=...) or `sacctmgr -P show "
                   "reservation format=Name,TimeStart,TimeEnd,NodeNames,Flags` output");
}

std::vector<NodeOutage> read_node_events(std::string_view content, const std::string& file_name,
                                         const TimeZone& zone) {
  csv::require_text(content, file_name, "`sacctmgr -P show event` output");
  csv::Reader reader(content, file_name, '|');
  csv::Record r;
  reader.next(r);
  const csv::Header h(r.fields);
  const auto c_node = h.require("NodeName", file_name, r.line),
             c_start = h.require("TimeStart", file_name, r.line),
             c_end = h.require("TimeEnd", file_name, r.line), c_state = h.require("State", file_name, r.line);
  const auto c_reason = h.find("Reason");
  std::vector<NodeOutage> out;
  while (reader.next(r)) {
    if (r.fields.size() != h.size())
      throw InputError(file_name, r.line, "line",
                       fmt::format("{} fields, the header has {}", r.fields.size(), h.size()));
    if (r.fields[c_node].empty()) continue;  // a cluster event (registered TRES)
    // node_state_string_compact: DOWN, DOWN* (not responding), DOWN$ (in a MAINT reservation), DRAIN...
    auto state = text::to_upper(r.fields[c_state]);
    while (!state.empty() && std::string_view("*$~#!%@^-").find(state.back()) != std::string_view::npos)
      state.pop_back();
    // DRNG: draining (jobs still on it); FAILG: failing; INVAL: its registration refused (INVALID_REG,
    // drained: e.g. slurmd reported fewer GRES than slurm.conf gives). Each starts no job, as DRAIN/FAIL.
    if (state == "DRNG" || state == "INVAL") state = "DRAIN";
    if (state == "FAILG") state = "FAIL";
    if (state != "DOWN" && state != "DRAIN" && state != "FAIL")
      throw InputError(
          file_name, r.line, "State",
          fmt::format("'{}' is not a node outage state (DOWN, DRAIN, DRNG, FAIL, FAILG or INVAL)",
                      r.fields[c_state]));
    const auto start = wall_time(r.fields[c_start], zone, file_name, r.line, "TimeStart");
    const auto end = wall_time(r.fields[c_end], zone, file_name, r.line, "TimeEnd");
    for (auto& node : node_names(r.fields[c_node], file_name, r.line, "NodeName"))
      out.push_back({std::move(node), start, end, state, c_reason ? r.fields[*c_reason] : std::string()});
  }
  std::stable_sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.start < b.start; });
  return out;
}

const Reservation* active_period(const Site& site, std::size_t index, Seconds t) {
  const auto& name = site.reservations[index].name;
  for (const auto& r : site.reservations)
    if (r.start <= t && t < r.end && r.name == name) return &r;
  return nullptr;
}

void validate_site_events(const Site& site) {
  for (const auto& r : site.reservations) {
    if (r.name.empty()) throw std::invalid_argument("a reservation without a name");
    if (r.end <= r.start)
      throw std::invalid_argument(fmt::format("reservation '{}': ends before it starts", r.name));
    for (const auto& n : r.nodes)
      if (!site.find_node(n))
        throw std::invalid_argument(fmt::format("reservation '{}': unknown node '{}'", r.name, n));
    for (const auto& f : r.flags)
      if (!reservation_flag_model(f))
        throw std::invalid_argument(fmt::format("reservation '{}': unknown flag '{}'", r.name, f));
    for (const auto* list : {&r.users, &r.accounts}) {
      const auto denied =
          std::count_if(list->begin(), list->end(), [](const auto& s) { return s[0] == '-'; });
      if (denied != 0 && static_cast<std::size_t>(denied) != list->size())
        throw std::invalid_argument(
            fmt::format("reservation '{}': a list mixes allowed and denied ('-') names", r.name));
    }
  }
  for (const auto& o : site.outages) {
    if (!site.find_node(o.node))
      throw std::invalid_argument(fmt::format("node event: unknown node '{}'", o.node));
    if (o.end <= o.start)
      throw std::invalid_argument(fmt::format("node event of '{}': ends before it starts", o.node));
  }
}

}  // namespace slurmtwin
