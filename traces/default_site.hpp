#pragma once
// The built-in default site: what `slurmtwin replay` runs on with no input at all.
#include "traces/site.hpp"

namespace slurmtwin {

/// A small cluster: 64 CPU nodes, 4 big-memory nodes and 8 GPU nodes; partitions cpu (default), gpu
/// and debug; QOS normal/high/low/debug; a 2-level account tree with unequal shares; multifactor
/// priority with non-zero weights, Fair Tree, backfill and QOS preemption of 'low'.
Site default_site();

}  // namespace slurmtwin

namespace slurmtwin {

/// The default site scaled out: `cpu_nodes` CPU nodes (plus 4% big-memory and 6% GPU nodes), same
/// partitions, QOS, accounts and settings. Used for year-scale benchmarks (~1,000 nodes).
Site scaled_default_site(std::uint32_t cpu_nodes);

}  // namespace slurmtwin
