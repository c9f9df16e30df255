#pragma once
// The keys real slurmctld (22.05, and older versions' since removed) accepts in slurm.conf, so that the
// importer can tell a typo (an error, as slurmctld refuses to start) from a key it does not model, and say
// which of those change scheduling decisions.
#include <string>
#include <string_view>

#include "traces/slurm_version.hpp"

namespace slurmtwin {

enum class SlurmConfSection { kGlobal, kNode, kPartition };

/// Whether slurmctld knows `key` (case-insensitive) in that part of slurm.conf. `version` (major * 100
/// + minor, e.g. 2002) is the site's Slurm: keys that 21.08 removed (CacheGroups, CheckpointType, ...)
/// are known to the versions that still read them.
bool known_slurm_conf_key(SlurmConfSection section, std::string_view key,
                          int version = kModelledSlurmVersion);
/// For a global key a later Slurm removed: the last version that read it (major * 100 + minor); else 0.
int last_version_reading(std::string_view key);
/// The known key closest to `key` by edit distance, when close enough to be a typo of it; "" if none.
std::string nearest_slurm_conf_key(SlurmConfSection section, std::string_view key);
/// For a known global key that affects scheduling but is not modelled: what that means; "" otherwise.
std::string_view scheduling_effect(std::string_view key);

}  // namespace slurmtwin
