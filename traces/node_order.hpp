#pragma once
// The order of slurmctld's node table. slurmctld sorts its nodes by name with strnatcmp when it reads
// slurm.conf (read_config.c, _reorder_nodes_by_name in 20.02-21.08, _sort_node_record_table_ptr from
// 22.05 on; only a topology plugin that ranks nodes changes that, and topology/tree does not), so the
// file's order of NodeName lines does not matter: every "first node", "lowest index" and best-fit tie
// of node selection follows this order.
#include <string_view>

#include "traces/site.hpp"

namespace slurmtwin {

/// Slurm's strnatcmp: <0, 0, >0 as `a` sorts before, with or after `b`. Runs of digits compare as
/// numbers ("n9" < "n10"); a run starting with '0' on either side compares digit by digit as a
/// fraction ("n01" < "n1", "n010" < "n09"); blanks are skipped; case matters; other characters compare
/// as signed chars (as Slurm's `char` on x86 and most Linux targets).
int natural_compare(std::string_view a, std::string_view b);

/// Puts `site.nodes` in slurmctld's node-table order (a stable sort by natural_compare). Partitions,
/// switches and reservations name their nodes, so nothing else changes.
void order_nodes_as_slurmctld(Site& site);

/// Whether `site.nodes` is in that order.
bool nodes_in_slurmctld_order(const Site& site);

}  // namespace slurmtwin
