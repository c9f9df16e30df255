#include "traces/topology.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <stdexcept>
#include <unordered_map>
#include <unordered_set>

#include "traces/hostlist.hpp"
#include "traces/input_limits.hpp"
#include "traces/read_report.hpp"
#include "traces/text.hpp"

namespace slurmtwin {

std::vector<std::uint32_t> switch_levels(const std::vector<Switch>& switches, std::size_t* culprit) {
  const auto fail = [&](std::size_t i, const std::string& what) {
    if (culprit) *culprit = i;
    throw std::invalid_argument(what);
  };
  if (switches.size() > kMaxSwitches)
    throw std::invalid_argument(fmt::format("{} switches: more than {}", switches.size(), kMaxSwitches));
  std::unordered_map<std::string, std::size_t> index;
  for (std::size_t i = 0; i < switches.size(); ++i) {
    const auto& s = switches[i];
    if (s.name.empty()) fail(i, "a switch without a name");
    if (!index.emplace(s.name, i).second) fail(i, fmt::format("switch '{}' defined twice", s.name));
    if (!s.nodes.empty() && !s.children.empty())
      fail(i, fmt::format("switch '{}' lists both nodes and child switches (one or the other)", s.name));
  }
  std::vector<std::vector<std::size_t>> children(switches.size());
  for (std::size_t i = 0; i < switches.size(); ++i)
    for (const auto& c : switches[i].children) {
      const auto it = index.find(c);
      if (it == index.end() || it->second == i)
        fail(i, fmt::format("switch '{}' has invalid child '{}'", switches[i].name, c));
      children[i].push_back(it->second);
    }
  // Levels by passes as topology_tree.c does: a switch is resolved once all its children are; a pass
  // that resolves nothing new leaves a cycle.
  constexpr auto kUnresolved = static_cast<std::uint32_t>(-1);
  std::vector<std::uint32_t> level(switches.size(), kUnresolved);
  bool any_leaf = false;
  for (std::size_t i = 0; i < switches.size(); ++i)
    if (children[i].empty()) {
      level[i] = 0;
      any_leaf = true;
    }
  if (!switches.empty() && !any_leaf) fail(0, "switches contain no nodes");
  for (bool progress = true; progress;) {
    progress = false;
    for (std::size_t i = 0; i < switches.size(); ++i) {
      if (level[i] != kUnresolved) continue;
      std::uint32_t l = 0;
      bool ready = true;
      for (const auto c : children[i]) {
        if (level[c] == kUnresolved)
          ready = false;
        else
          l = std::max(l, level[c] + 1);
      }
      if (ready) {
        level[i] = l;
        progress = true;
      }
    }
  }
  for (std::size_t i = 0; i < switches.size(); ++i)
    if (level[i] == kUnresolved)
      fail(i, fmt::format("switch configuration is not a tree: switch '{}' is in a cycle", switches[i].name));
  return level;
}

void validate_topology(const Site& site) {
  switch_levels(site.switches);
  std::unordered_set<std::string_view> known;
  for (const auto& n : site.nodes) known.insert(n.name);
  for (const auto& s : site.switches)
    for (const auto& n : s.nodes)
      if (!known.count(n))
        throw std::invalid_argument(fmt::format("switch '{}': unknown node '{}'", s.name, n));
}

std::vector<Switch> read_topology_conf(std::string_view content, const std::string& file, const Site& site,
                                       std::vector<std::string>& warnings) {
  std::vector<Switch> out;
  std::vector<std::uint64_t> lines;  // of each switch, for errors found once all are read
  std::size_t unknown = 0;           // node names slurm.conf lacks
  std::string first_unknown;
  std::unordered_set<std::string> switch_names;  // read so far
  std::unordered_set<std::string_view> known;    // slurm.conf's node names
  for (const auto& n : site.nodes) known.insert(n.name);
  std::uint64_t line_no = 0;
  for (const auto raw : text::split(content, '\n')) {
    ++line_no;
    auto line = raw.substr(0, raw.find('#'));
    if (text::trim(line).empty()) continue;
    Switch sw;
    bool has_nodes = false, has_switches = false, has_level = false;
    std::string nodes_value;
    bool first = true;
    for (const auto word : text::split_ws(line)) {
      const auto eq = word.find('=');
      if (eq == std::string_view::npos)
        throw InputError(file, line_no, std::string(word), "not a Key=Value pair");
      const auto key = word.substr(0, eq);
      const std::string value(word.substr(eq + 1));
      if (first && !text::iequals(key, "SwitchName"))
        throw InputError(file, line_no, std::string(key), "a line must start with SwitchName=");
      first = false;
      if (text::iequals(key, "SwitchName")) {
        if (!sw.name.empty()) throw InputError(file, line_no, "SwitchName", "twice on one line");
        if (value.empty()) throw InputError(file, line_no, "SwitchName", "empty");
        sw.name = value;
      } else if (text::iequals(key, "Nodes")) {
        has_nodes = true;
        nodes_value = value;
      } else if (text::iequals(key, "Switches")) {
        has_switches = true;
        try {
          sw.children = expand_hostlist(value, kMaxSiteNodes);
        } catch (const std::invalid_argument& e) {
          throw InputError(file, line_no, "Switches", e.what());
        }
      } else if (text::iequals(key, "LinkSpeed") || text::iequals(key, "Level")) {
        // LinkSpeed is read and never used by node choice; Level is what scontrol derives.
        const auto v = text::parse_int(value);
        if (!v || *v < 0 || *v > 0xFFFFFFFFLL)
          throw InputError(file, line_no, std::string(key), fmt::format("'{}' is not a count", value));
        has_level = has_level || text::iequals(key, "Level");
      } else {
        throw InputError(file, line_no, std::string(key),
                         "unknown topology.conf key (SwitchName, Switches, Nodes, LinkSpeed)");
      }
    }
    if (!switch_names.insert(sw.name).second)
      throw InputError(file, line_no, "SwitchName", fmt::format("switch '{}' defined twice", sw.name));
    // scontrol show topology lists a higher switch's nodes too (its children's): not read.
    if (has_nodes && has_switches && !has_level)
      throw InputError(file, line_no, "Nodes", "a switch has nodes or child switches, not both");
    if (!has_nodes && !has_switches)
      throw InputError(file, line_no, "SwitchName", "a switch needs Nodes= or Switches=");
    if (has_nodes && !has_switches) {
      std::vector<std::string> names;
      try {
        names = expand_hostlist(nodes_value, kMaxSiteNodes);
      } catch (const std::invalid_argument& e) {
        throw InputError(file, line_no, "Nodes", e.what());
      }
      for (auto& n : names) {
        if (known.count(n))
          sw.nodes.push_back(std::move(n));
        else if (unknown++ == 0)
          first_unknown = n;
      }
      // A leaf whose every node slurm.conf lacks keeps no node: slurmctld keeps it, empty.
      if (sw.nodes.empty())
        warnings.push_back(
            fmt::format("{}:{}: switch '{}' has no node slurm.conf knows: no job is placed under it", file,
                        line_no, sw.name));
    }
    out.push_back(std::move(sw));
    lines.push_back(line_no);
  }
  if (out.empty()) {
    warnings.push_back(
        fmt::format("{}: no switches configured: jobs are placed as under topology/flat", file));
    return out;
  }
  std::size_t culprit = 0;
  try {
    switch_levels(out, &culprit);
  } catch (const std::invalid_argument& e) {
    throw InputError(file, lines[culprit], "SwitchName", e.what());
  }
  if (unknown > 0)
    warnings.push_back(fmt::format("{}: switches name {} node(s) slurm.conf lacks (first {}); ignored", file,
                                   unknown, first_unknown));
  std::map<std::string, std::uint32_t> leaves_of;
  for (const auto& s : out)
    for (const auto& n : s.nodes) ++leaves_of[n];
  std::size_t shared = 0, none = 0;
  std::string first_shared, first_none;
  for (const auto& [n, count] : leaves_of)
    if (count > 1 && shared++ == 0) first_shared = n;
  for (const auto& n : site.nodes)
    if (!leaves_of.count(n.name) && none++ == 0) first_none = n.name;
  if (shared > 0)
    warnings.push_back(
        fmt::format("{}: {} node(s) on more than one leaf switch (first {})", file, shared, first_shared));
  if (none > 0)
    warnings.push_back(fmt::format(
        "{}: switches lack access to {} node(s) (first {}): topology/tree never places a job there", file,
        none, first_none));
  return out;
}

}  // namespace slurmtwin
