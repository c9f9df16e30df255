#include "sim/dependencies.hpp"

#include <fmt/format.h>
#include <boost/graph/adjacency_list.hpp>

#include <algorithm>
#include <stdexcept>
#include <tuple>

namespace slurmtwin::sim {

// Vertices are job indices (every job of the replay); an edge u -> v: job v waits for job u.
struct Dependencies::Graph {
  explicit Graph(std::size_t jobs) : g(jobs) {}
  boost::adjacency_list<boost::vecS, boost::vecS, boost::directedS> g;
};

namespace {

bool failed_record(JobState s) {
  switch (s) {
    case JobState::kFailed:
    case JobState::kCancelled:
    case JobState::kOutOfMemory:
    case JobState::kNodeFail:
    case JobState::kBootFail:
    case JobState::kDeadline:
      return true;
    default:
      return false;
  }
}

const std::vector<std::uint32_t> kNone;

}  // namespace

Dependencies::~Dependencies() = default;

Dependencies::Dependencies(const Trace& trace, const std::vector<SimJob>& jobs) {
  bool any = false;
  for (const auto& j : jobs) any = any || trace.jobs[j.trace_index].dependency != kNoName;
  if (!any) return;
  graph_ = std::make_unique<Graph>(jobs.size());
  recorded_failure_.resize(jobs.size());
  key_.resize(jobs.size());
  // Job id -> its jobs (one, or every task of an array), and (job id, task) -> the task.
  std::map<std::uint64_t, std::vector<std::uint32_t>> by_id;
  std::map<std::pair<std::uint64_t, std::int32_t>, std::uint32_t> by_task;
  for (std::uint32_t k = 0; k < jobs.size(); ++k) {
    const auto& r = trace.jobs[jobs[k].trace_index];
    recorded_failure_[k] = failed_record(r.state);
    key_[k] = {r.user, r.name};
    by_id[r.job_id].push_back(k);
    by_task[{r.job_id, r.array_task}] = k;
  }
  // Submission order, as the controller submits: time, then job id.
  const auto before = [&](std::uint32_t a, std::uint32_t b) {
    return std::tie(jobs[a].submit, jobs[a].id) < std::tie(jobs[b].submit, jobs[b].id);
  };
  for (std::uint32_t k = 0; k < jobs.size(); ++k) {
    const auto& r = trace.jobs[jobs[k].trace_index];
    if (r.dependency == kNoName) continue;
    DependencySpec spec;
    try {
      spec = parse_dependency(trace.strings.name(r.dependency));
    } catch (const std::invalid_argument& e) {
      refusals_[k] = fmt::format("bad dependency {}", e.what());
      continue;
    }
    Resolved res;
    res.any = spec.any;
    std::string refusal;
    bool lifted = false;  // a term named a job that is gone: one cleared entry clears a '?' list
    for (const auto& t : spec.terms) {
      Resolved::Term term{t.type, {}, t.delay};
      if (t.type == DependencyType::kSingleton) {
        singletons_[key_[k]].push_back(k);
      } else if (t.type == DependencyType::kAfterCorr || t.array_task >= 0) {
        const auto task =
            t.type == DependencyType::kAfterCorr && t.array_task < 0 ? r.array_task : t.array_task;
        if (const auto it = by_task.find({t.job_id, task}); it != by_task.end())
          term.jobs.push_back(it->second);
      } else if (const auto it = by_id.find(t.job_id); it != by_id.end()) {
        term.jobs = it->second;
      }
      if (t.type != DependencyType::kSingleton) {
        if (std::find(term.jobs.begin(), term.jobs.end(), k) != term.jobs.end())
          refusal = "dependency on the job itself";
        // A job that does not exist when the term is tested (not in the trace, or submitted later) is
        // "gone": slurmctld 22.05 lifts the term (test_job_dependency), whatever its type.
        const auto named = term.jobs.size();
        std::erase_if(term.jobs, [&](std::uint32_t d) { return d == k || !before(d, k); });
        lifted = lifted || named == 0 || term.jobs.size() < named;
        if (term.jobs.empty()) continue;
      }
      res.terms.push_back(std::move(term));
    }
    if (!refusal.empty()) {
      refusals_[k] = refusal;
      continue;
    }
    if (res.terms.empty() || (res.any && lifted)) continue;  // nothing left to wait for
    for (const auto& term : res.terms)
      for (auto d : term.jobs) boost::add_edge(d, k, graph_->g);
    specs_.emplace(k, std::move(res));
  }
  for (auto& [key, list] : singletons_) list.erase(std::unique(list.begin(), list.end()), list.end());
  // Every job of a user and name that some singleton job has (only singletons ask who blocks them).
  for (std::uint32_t k = 0; k < jobs.size(); ++k)
    if (singletons_.count(key_[k])) same_key_[key_[k]].push_back(k);
}

std::string Dependencies::refusal(std::uint32_t job) const {
  const auto it = refusals_.find(job);
  return it == refusals_.end() ? std::string() : it->second;
}

std::vector<std::uint32_t> Dependencies::dependents(std::uint32_t job) const {
  std::vector<std::uint32_t> out;
  if (!graph_) return out;
  for (auto [e, end] = boost::out_edges(job, graph_->g); e != end; ++e)
    out.push_back(static_cast<std::uint32_t>(boost::target(*e, graph_->g)));
  return out;
}

const std::vector<std::uint32_t>& Dependencies::singletons_like(std::uint32_t job) const {
  if (key_.empty()) return kNone;
  const auto it = singletons_.find(key_[job]);
  return it == singletons_.end() ? kNone : it->second;
}

// A job refused at submit never ran: its end state stays kUnknown, so it did not succeed.
bool Dependencies::succeeded(const SimState& state, std::uint32_t job) const {
  return state.jobs[job].end_state == JobState::kCompleted && !recorded_failure_[job];
}

// _find_singleton_job: any job of the same user and name, singleton or not, that runs, is suspended,
// or pends with a lower job id.
bool Dependencies::singleton_blocked(const SimState& state, std::uint32_t job) const {
  const auto& self = state.jobs[job];
  for (auto other : same_key_.at(key_[job])) {
    if (other == job) continue;
    const auto& o = state.jobs[other];
    if (o.state == SimJobState::kRunning || o.state == SimJobState::kSuspended) return true;
    if (o.state == SimJobState::kPending && std::tie(o.id, o.array_task) < std::tie(self.id, self.array_task))
      return true;
  }
  return false;
}

DependencyStatus Dependencies::test(const SimState& state, std::uint32_t job, Seconds& retry_at) const {
  retry_at = kUnsetTime;
  const auto& spec = specs_.at(job);
  bool all = true, one = false, all_never = true;
  for (const auto& term : spec.terms) {
    // Each named job (every task of an array) must pass the term.
    DependencyStatus s = DependencyStatus::kSatisfied;
    if (term.type == DependencyType::kSingleton) {
      s = singleton_blocked(state, job) ? DependencyStatus::kWaiting : DependencyStatus::kSatisfied;
    }
    for (auto d : term.jobs) {
      const auto& o = state.jobs[d];
      const bool ended = o.state == SimJobState::kDone || o.state == SimJobState::kRejected;
      DependencyStatus one_job = DependencyStatus::kWaiting;
      switch (term.type) {
        case DependencyType::kAfter:
          if (o.state == SimJobState::kRejected || (o.state == SimJobState::kDone && o.start == kUnsetTime)) {
            one_job = DependencyStatus::kSatisfied;  // cancelled before it started
          } else if (o.start != kUnsetTime && o.state != SimJobState::kPending) {
            if (state.now - o.start >= term.delay) {
              one_job = DependencyStatus::kSatisfied;
            } else {
              const Seconds at = o.start + term.delay;
              retry_at = retry_at == kUnsetTime ? at : std::min(retry_at, at);
            }
          }
          break;
        case DependencyType::kAfterAny:
          if (ended) one_job = DependencyStatus::kSatisfied;
          break;
        case DependencyType::kAfterOk:
        case DependencyType::kAfterCorr:
          if (ended) one_job = succeeded(state, d) ? DependencyStatus::kSatisfied : DependencyStatus::kNever;
          break;
        case DependencyType::kAfterNotOk:
          if (ended) one_job = succeeded(state, d) ? DependencyStatus::kNever : DependencyStatus::kSatisfied;
          break;
        case DependencyType::kSingleton:
          break;
      }
      if (one_job == DependencyStatus::kNever)
        s = DependencyStatus::kNever;
      else if (one_job == DependencyStatus::kWaiting && s == DependencyStatus::kSatisfied)
        s = DependencyStatus::kWaiting;
    }
    all = all && s == DependencyStatus::kSatisfied;
    one = one || s == DependencyStatus::kSatisfied;
    all_never = all_never && s == DependencyStatus::kNever;
    if (!spec.any && s == DependencyStatus::kNever) return DependencyStatus::kNever;
  }
  if (spec.any ? one : all) return DependencyStatus::kSatisfied;
  if (spec.any && all_never) return DependencyStatus::kNever;
  return DependencyStatus::kWaiting;
}

}  // namespace slurmtwin::sim
