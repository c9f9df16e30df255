#pragma once
// The site as YAML (schema: docs/site-schema.md): the editable, reviewable form of an imported site.
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
/// Writes site_to_yaml(site) to `path` atomically.
void save_site_yaml(const Site& site, const std::string& path);

}  // namespace slurmtwin
