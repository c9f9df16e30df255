#include "experiments/sweep/sweep_mpi.hpp"

#include <fmt/format.h>
#include <mpi.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <exception>
#include <iostream>
#include <mutex>
#include <sstream>
#include <thread>

#include "experiments/replay/parallel.hpp"
#include "experiments/sweep/feasibility.hpp"

namespace slurmtwin::experiments {
namespace {

// Message tags. A worker rank sends kRequest once, then a kResult (which also asks for the next
// point) per point, or kError; rank 0 answers each with kAssign carrying a task index, or kNoMore.
constexpr int kTagRequest = 1;
constexpr int kTagResult = 2;
constexpr int kTagError = 3;
constexpr int kTagAssign = 4;
constexpr std::int64_t kNoMore = -1;
/// Rank 0's pause between polls when no message is waiting (s): small next to a replay (~seconds).
constexpr auto kPollPause = std::chrono::milliseconds(2);

class Writer {
 public:
  void u64(std::uint64_t v) { bytes_.append(reinterpret_cast<const char*>(&v), sizeof(v)); }
  void f64(double v) { bytes_.append(reinterpret_cast<const char*>(&v), sizeof(v)); }
  void str(const std::string& s) {
    u64(s.size());
    bytes_ += s;
  }
  void doubles(const std::vector<double>& v) {
    u64(v.size());
    for (double x : v) f64(x);
  }
  const std::string& bytes() const { return bytes_; }

 private:
  std::string bytes_;
};

class Reader {
 public:
  explicit Reader(const std::string& bytes) : bytes_(bytes) {}
  std::uint64_t u64() {
    std::uint64_t v = 0;
    take(&v, sizeof(v));
    return v;
  }
  double f64() {
    double v = 0;
    take(&v, sizeof(v));
    return v;
  }
  std::string str() {
    const auto n = u64();
    if (n > bytes_.size() - pos_) throw std::runtime_error("sweep --mpi: truncated message");
    std::string s = bytes_.substr(pos_, n);
    pos_ += n;
    return s;
  }
  std::vector<double> doubles() {
    const auto n = u64();
    if (n > (bytes_.size() - pos_) / sizeof(double))
      throw std::runtime_error("sweep --mpi: truncated message");
    std::vector<double> v(n);
    for (auto& x : v) x = f64();
    return v;
  }

 private:
  void take(void* out, std::size_t n) {
    if (n > bytes_.size() - pos_) throw std::runtime_error("sweep --mpi: truncated message");
    std::memcpy(out, bytes_.data() + pos_, n);
    pos_ += n;
  }
  const std::string& bytes_;
  std::size_t pos_ = 0;
};

std::string encode_result(std::size_t index, const SweepRow& r) {
  Writer w;
  w.u64(index);
  w.str(r.key);
  w.str(r.params_json);
  w.str(r.metrics_json);
  w.str(r.engine);
  w.f64(r.run_seconds);
  w.str(r.version);
  w.str(r.trace_fingerprint);
  w.str(r.created);
  w.doubles(r.objectives);
  w.doubles(r.constraint_values);
  w.u64(r.replicates);
  w.doubles(r.standard_errors);
  w.str(r.job_waits);
  return w.bytes();
}

SweepRow decode_result(const std::string& bytes, std::size_t& index) {
  Reader rd(bytes);
  SweepRow r;
  index = rd.u64();
  r.key = rd.str();
  r.params_json = rd.str();
  r.metrics_json = rd.str();
  r.engine = rd.str();
  r.run_seconds = rd.f64();
  r.version = rd.str();
  r.trace_fingerprint = rd.str();
  r.created = rd.str();
  r.objectives = rd.doubles();
  r.constraint_values = rd.doubles();
  r.replicates = static_cast<std::uint32_t>(rd.u64());
  r.standard_errors = rd.doubles();
  r.job_waits = rd.str();
  return r;
}

void send_bytes(const std::string& bytes, int dest, int tag) {
  MPI_Send(bytes.data(), static_cast<int>(bytes.size()), MPI_BYTE, dest, tag, MPI_COMM_WORLD);
}

std::string recv_bytes(const MPI_Status& probed) {
  int count = 0;
  MPI_Get_count(&probed, MPI_BYTE, &count);
  std::string bytes(static_cast<std::size_t>(count), '\0');
  MPI_Recv(bytes.data(), count, MPI_BYTE, probed.MPI_SOURCE, probed.MPI_TAG, MPI_COMM_WORLD,
           MPI_STATUS_IGNORE);
  return bytes;
}

void assign(std::int64_t index, int dest) {
  MPI_Send(&index, 1, MPI_INT64_T, dest, kTagAssign, MPI_COMM_WORLD);
}

/// A worker rank: ask for points, replay them, send the rows back, until told there are no more.
void worker_rank(const SweepSpec& spec, const SweepPlan& plan) {
  MPI_Send(nullptr, 0, MPI_BYTE, 0, kTagRequest, MPI_COMM_WORLD);
  while (true) {
    std::int64_t index = kNoMore;
    MPI_Recv(&index, 1, MPI_INT64_T, 0, kTagAssign, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    if (index == kNoMore) return;
    try {
      const auto row = evaluate_task(spec, plan, static_cast<std::size_t>(index));
      send_bytes(encode_result(static_cast<std::size_t>(index), row), 0, kTagResult);
    } catch (const std::exception& e) {
      send_bytes(e.what(), 0, kTagError);
      return;
    }
  }
}

/// Rank 0: the store, local worker threads, and the dispatch loop for the other ranks.
SweepMpiSummary coordinator_rank(const SweepSpec& spec, const SweepPlan& plan, const std::string& db,
                                 const SweepRunOptions& options, int ranks) {
  SweepMpiSummary out;
  out.rank0 = true;
  out.by_rank.assign(static_cast<std::size_t>(ranks), 0);
  SweepStore store(db);
  describe_sweep(store, spec, plan);
  const auto done = store.keys();
  std::vector<std::size_t> todo;
  for (std::size_t i = 0; i < plan.tasks.size(); ++i) {
    ++out.run.total;
    if (done.count(plan.tasks[i].key))
      ++out.run.skipped;
    else
      todo.push_back(i);
  }

  std::ostringstream discard;
  ProgressOptions po;
  po.label = "sweep";
  po.unit = "points";
  po.total = out.run.total;
  po.initial = out.run.skipped;
  po.style = options.progress ? options.progress_style : ProgressStyle::kOff;
  po.interval_s = std::max(0.05, options.progress_interval_s);
  Progress progress(options.progress ? *options.progress : discard, po);
  if (options.progress)
    *options.progress
        << fmt::format("sweep: {} points, {} already in {}, {} to run on {} MPI ranks (rank 0: {} threads)\n",
                       out.run.total, out.run.skipped, db, todo.size(), ranks, options.jobs)
        << std::flush;

  std::atomic<std::size_t> next{0};
  std::mutex mutex;  // guards store, out.by_rank, error
  std::exception_ptr error;
  std::atomic<bool> stop{false};
  const auto take = [&]() -> std::int64_t {
    if (stop) return kNoMore;
    const auto i = next++;
    return i < todo.size() ? static_cast<std::int64_t>(todo[i]) : kNoMore;
  };
  const auto store_row = [&](const SweepRow& row, std::size_t rank) {
    std::lock_guard lock(mutex);
    store.insert(row, spec.objectives, spec.constraints);
    ++out.by_rank[rank];
  };

  // The dispatch loop for the other ranks: every message waiting now, answered (main thread only,
  // as MPI_THREAD_FUNNELED asks). It runs between the local workers' polls, then until every rank
  // has been told there is no more.
  int active = ranks - 1;  // worker ranks not yet told kNoMore (or failed)
  const auto serve = [&] {
    while (active > 0) {
      int flag = 0;
      MPI_Status status;
      MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &status);
      if (!flag) return;
      const auto bytes = recv_bytes(status);
      const int src = status.MPI_SOURCE;
      if (status.MPI_TAG == kTagError) {
        std::lock_guard lock(mutex);
        if (!error)
          error = std::make_exception_ptr(std::runtime_error(fmt::format("rank {}: {}", src, bytes)));
        stop = true;
        --active;
        continue;
      }
      if (status.MPI_TAG == kTagResult) {
        try {
          std::size_t index = 0;
          const auto row = decode_result(bytes, index);
          if (index >= plan.tasks.size() || row.key != plan.tasks[index].key)
            throw std::runtime_error(fmt::format(
                "rank {} sent a point whose key does not match rank 0's (same spec, site and trace on every "
                "rank?)",
                src));
          store_row(row, static_cast<std::size_t>(src));
          progress.add();
        } catch (...) {
          std::lock_guard lock(mutex);
          if (!error) error = std::current_exception();
          stop = true;
        }
      }
      const auto i = take();
      assign(i, src);
      if (i == kNoMore) --active;
    }
  };
  // Rank 0's own workers: each takes points until none is left (an error stops the taking).
  ParallelOptions local;
  local.threads = std::max(1u, options.jobs);
  local.poll_every = kPollPause;
  local.poll = [&] {
    serve();
    progress.poll();
  };
  parallel_for(
      local.threads,
      [&](std::size_t) {
        for (auto i = take(); i != kNoMore; i = take()) {
          try {
            store_row(evaluate_task(spec, plan, static_cast<std::size_t>(i)), 0);
          } catch (...) {
            std::lock_guard lock(mutex);
            if (!error) error = std::current_exception();
            stop = true;
          }
          progress.add();
        }
      },
      local);
  while (active > 0) {
    serve();
    std::this_thread::sleep_for(kPollPause);
    progress.poll();
  }
  if (error) std::rethrow_exception(error);
  for (auto n : out.by_rank) out.run.evaluated += n;
  progress.finish();
  out.run.feasible = assess_constraints(store.rows(), store.constraints()).count;
  return out;
}

}  // namespace

SweepMpiSummary run_sweep_mpi(const SweepSpec& spec, const std::string& db, const SweepRunOptions& options) {
  int provided = 0;
  // Only the main thread of each rank calls MPI (rank 0's worker threads never do).
  MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided);
  int rank = 0, ranks = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  SweepMpiSummary out;
  try {
    SweepPlan plan = plan_sweep(spec);
    plan.check_invariants = options.check_invariants;
    if (rank == 0)
      out = coordinator_rank(spec, plan, db, options, ranks);
    else
      worker_rank(spec, plan);
  } catch (const std::exception& e) {
    std::cerr << fmt::format("slurmtwin sweep --mpi: rank {}: error: {}\n", rank, e.what()) << std::flush;
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  MPI_Finalize();
  return out;
}

}  // namespace slurmtwin::experiments
