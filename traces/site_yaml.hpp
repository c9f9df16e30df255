#pragma once
// The site as YAML (schema: docs/site-schema.md): the editable, reviewable form of an imported site.
#include <cstddef>
#include <string>
#include <string_view>

#include "traces/site.hpp"

namespace slurmtwin {

/// Loads and validate()s a site YAML file. Unknown keys, bad types and bad values throw InputError
/// naming file:line and the key; a site that fails validate() throws InputError naming the file.
Site load_site_yaml(const std::string& path);
/// The same from text; `file_name` names the content in messages.
Site parse_site_yaml(std::string_view content, const std::string& file_name);

/// The site as YAML: every field written; runs of consecutive nodes that differ only in name are one
/// entry with a hostlist `names`. parse_site_yaml(site_to_yaml(s)) == s for every site that validates
/// (Shares with parent set are written as "parent" and read back with value 1, as the importers make them).
std::string site_to_yaml(const Site& site);
/// The top-level sections of a site YAML, in the order site_to_yaml writes them (the header is the
/// comment line and cluster_name).
enum class SiteSection {
  kHeader,
  kNodes,
  kPartitions,
  kQos,
  kAccounts,
  kAssociations,
  kUsers,
  kScheduler,
  kEvents,    // reservations and node outages; empty text when the site has neither
  kTopology,  // TopologyPlugin, TopologyParam, topology.conf's switches; empty text under topology/flat
};
inline constexpr std::size_t kSiteSections = 10;
/// One section's text without its final newline: site_to_yaml is the non-empty sections in order, each
/// followed by a newline (so a caller can reuse the text of sections that did not change).
std::string site_yaml_section(const Site& site, SiteSection section);
/// Whether `a` and `b` agree on everything `section` writes.
bool same_site_section(const Site& a, const Site& b, SiteSection section);
/// Writes site_to_yaml(site) to `path` atomically.
void save_site_yaml(const Site& site, const std::string& path);

}  // namespace slurmtwin
