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

/// The sizes scaled_default_site builds (CPU nodes): beyond the largest Slurm sites, well inside memory.
inline constexpr std::uint32_t kMaxDefaultCpuNodes = 100000;

/// The default site scaled out: `cpu_nodes` CPU nodes (plus 1/16 big-memory and 1/8 GPU nodes, at
/// least one each), same partitions, QOS, accounts and settings; the debug partition has the first
/// 1/16 of the CPU nodes, at least 4 (all of them on a smaller site). Used for year-scale benchmarks
/// (~1,000 nodes). `cpu_nodes` outside 1..kMaxDefaultCpuNodes throws std::out_of_range.
Site scaled_default_site(std::uint32_t cpu_nodes);

}  // namespace slurmtwin
