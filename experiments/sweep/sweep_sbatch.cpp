#include "experiments/sweep/sweep_sbatch.hpp"

#include <fmt/format.h>

#include <filesystem>
#include <stdexcept>
#include <utility>

#include "traces/file_io.hpp"

namespace slurmtwin::experiments {
namespace {

/// `s` as one word for bash: single-quoted, with every ' written as '\''.
std::string shell_quote(const std::string& s) {
  std::string out = "'";
  for (const char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

}  // namespace

std::string emit_sweep_sbatch(const std::string& spec_path, const std::string& dir,
                              const SbatchOptions& options) {
  namespace fs = std::filesystem;
  const auto shards = options.shards;
  const auto cpus = options.cpus_per_task;
  const auto& time_limit = options.time_limit;
  const auto& partition = options.partition;
  if (shards == 0 || cpus == 0)
    throw std::invalid_argument("an array of no shards, or of tasks without CPUs");
  const auto abs_dir = fs::absolute(dir).lexically_normal().string();
  const auto abs_spec = fs::absolute(spec_path).lexically_normal().string();
  // A line break in a value would start a line of its own in the script, a command when it runs
  // (issue 27, D2): refused. #SBATCH lines are read by sbatch, which splits them at white space, takes
  // quotes as grouping and # as a comment (get_argument in src/sbatch/opt.c): each such character of a
  // value is escaped with a backslash there.
  for (const auto& [value, what] :
       {std::pair{&abs_spec, "the spec path"}, std::pair{&abs_dir, "--emit-sbatch"},
        std::pair{&time_limit, "--time"}, std::pair{&partition, "--partition"}})
    for (const unsigned char c : *value)
      if (c < 0x20 || c == 0x7f)
        throw std::invalid_argument(
            fmt::format("{} '{}' cannot go into an sbatch script: it has a control character "
                        "(a line break?)",
                        what, *value));
  const auto sbatch_value = [](const std::string& value) {
    std::string out;
    for (const char c : value) {
      if (c == ' ' || c == '"' || c == '\'' || c == '\\' || c == '#') out += '\\';
      out += c;
    }
    return out;
  };
  fs::create_directories(dir);
  std::error_code ec;
  auto binary = fs::read_symlink("/proc/self/exe", ec).string();
  if (ec || binary.empty()) binary = "slurmtwin";
  std::string extra;
  if (!time_limit.empty()) extra += fmt::format("#SBATCH --time={}\n", sbatch_value(time_limit));
  if (!partition.empty()) extra += fmt::format("#SBATCH --partition={}\n", sbatch_value(partition));
  // In the commands every path is quoted for bash, and the task id stays outside the quotes so that
  // bash expands it.
  const auto sweep = fmt::format(
      "#!/bin/bash\n"
      "# slurmtwin what-if sweep as a Slurm job array: task I runs shard I/{0} of {1} into its own\n"
      "# database; rerunning a task resumes it. Merge afterwards with merge.sbatch.\n"
      "#SBATCH --job-name=slurmtwin-sweep\n"
      "#SBATCH --array=0-{2}\n"
      "#SBATCH --cpus-per-task={3}\n"
      "#SBATCH --output={4}/shard-%a.log\n"
      "{5}"
      "set -euo pipefail\n"
      "exec {6} sweep run {7} --db {8}/shard-\"${{SLURM_ARRAY_TASK_ID}}\".db "
      "--shard \"${{SLURM_ARRAY_TASK_ID}}/{0}\" -j \"${{SLURM_CPUS_PER_TASK:-1}}\" --progress-interval 60\n",
      shards, abs_spec, shards - 1, cpus, sbatch_value(abs_dir), extra, shell_quote(binary),
      shell_quote(abs_spec), shell_quote(abs_dir));
  const auto merge = fmt::format(
      "#!/bin/bash\n"
      "# Merges the shard databases of sweep.sbatch into {0}/sweep.db (idempotent: rerun at will).\n"
      "#SBATCH --job-name=slurmtwin-sweep-merge\n"
      "#SBATCH --output={4}/merge.log\n"
      "{1}"
      "set -euo pipefail\n"
      "shopt -s nullglob\n"
      "exec {2} sweep merge --db {3}/sweep.db {3}/shard-*.db\n",
      abs_dir, extra, shell_quote(binary), shell_quote(abs_dir), sbatch_value(abs_dir));
  write_script_atomic((fs::path(dir) / "sweep.sbatch").string(), sweep);
  write_script_atomic((fs::path(dir) / "merge.sbatch").string(), merge);
  return fmt::format(
      "wrote {0}/sweep.sbatch ({1} array tasks) and {0}/merge.sbatch; submit with:\n"
      "  jid=$(sbatch --parsable {2}) && sbatch --dependency=afterok:$jid {3}\n",
      abs_dir, shards, shell_quote(abs_dir + "/sweep.sbatch"), shell_quote(abs_dir + "/merge.sbatch"));
}

}  // namespace slurmtwin::experiments
