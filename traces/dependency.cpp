#include "traces/dependency.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <stdexcept>
#include <string>

#include "traces/text.hpp"

namespace slurmtwin {
namespace {

struct TypeName {
  std::string_view name;
  DependencyType type;
};
constexpr TypeName kTypes[] = {
    {"after", DependencyType::kAfter},         {"afterany", DependencyType::kAfterAny},
    {"afterok", DependencyType::kAfterOk},     {"afternotok", DependencyType::kAfterNotOk},
    {"aftercorr", DependencyType::kAfterCorr}, {"afterburstbuffer", DependencyType::kAfterAny},
    {"singleton", DependencyType::kSingleton},
};

[[noreturn]] void bad(std::string_view text, const std::string& why) {
  throw std::invalid_argument(fmt::format("'{}': {}", text, why));
}

// A positive whole number that fits `limit`.
std::optional<std::int64_t> whole(std::string_view s, std::int64_t limit) {
  if (s.empty() || s.size() > 12) return std::nullopt;
  for (const char c : s)
    if (c < '0' || c > '9') return std::nullopt;
  const auto v = text::parse_int(s);
  if (!v || *v > limit) return std::nullopt;
  return v;
}

// ID, ID_TASK, and for `after` ID+MIN.
DependencyTerm job_term(std::string_view whole_text, DependencyType type, std::string_view id) {
  DependencyTerm t;
  t.type = type;
  if (const auto plus = id.find('+'); plus != std::string_view::npos) {
    if (type != DependencyType::kAfter) bad(whole_text, "a +MINUTES delay is only allowed with after");
    const auto minutes = whole(id.substr(plus + 1), 527040);  // at most a year
    if (!minutes) bad(whole_text, fmt::format("'{}' is not a delay in whole minutes", id.substr(plus + 1)));
    t.delay = *minutes * 60;
    id = id.substr(0, plus);
  }
  if (const auto u = id.find('_'); u != std::string_view::npos) {
    const auto task = whole(id.substr(u + 1), 4'000'000);
    if (!task) bad(whole_text, fmt::format("'{}' is not an array task id", id.substr(u + 1)));
    t.array_task = static_cast<std::int32_t>(*task);
    id = id.substr(0, u);
  }
  const auto job = whole(id, 4'294'967'295LL);
  if (!job || *job == 0) bad(whole_text, fmt::format("'{}' is not a job id", id));
  t.job_id = static_cast<std::uint64_t>(*job);
  return t;
}

}  // namespace

const char* to_string(DependencyType type) {
  switch (type) {
    case DependencyType::kAfter:
      return "after";
    case DependencyType::kAfterAny:
      return "afterany";
    case DependencyType::kAfterOk:
      return "afterok";
    case DependencyType::kAfterNotOk:
      return "afternotok";
    case DependencyType::kAfterCorr:
      return "aftercorr";
    case DependencyType::kSingleton:
      return "singleton";
  }
  return "?";
}

DependencySpec parse_dependency(std::string_view text) {
  const auto trimmed = text::trim(text);
  if (trimmed.empty()) bad(text, "empty dependency");
  // sbatch(1) allows one kind of separator, but slurmctld 22.05 accepts both and then treats every
  // term as '?' (one '?' sets or_flag for the whole list): so does this.
  const bool question = trimmed.find('?') != std::string_view::npos;
  std::string list(trimmed);
  if (question) std::replace(list.begin(), list.end(), ',', '?');
  DependencySpec spec;
  spec.any = question;
  for (const auto part : text::split(list, question ? '?' : ',')) {
    if (part.empty()) bad(text, "an empty dependency between separators");
    const auto colon = part.find(':');
    const auto name = part.substr(0, colon);
    if (colon == std::string_view::npos && !name.empty() && name.front() >= '0' && name.front() <= '9') {
      spec.terms.push_back(job_term(text, DependencyType::kAfterAny, name));  // legacy: a bare job id
      continue;
    }
    const TypeName* type = nullptr;
    for (const auto& t : kTypes)
      if (t.name == name) type = &t;
    if (!type) bad(text, fmt::format("unknown dependency type '{}'", name));
    if (type->type == DependencyType::kSingleton) {
      if (colon != std::string_view::npos) bad(text, "singleton takes no job ids");
      spec.terms.push_back({DependencyType::kSingleton, 0, -1, 0});
      continue;
    }
    if (colon == std::string_view::npos || colon + 1 == part.size())
      bad(text, fmt::format("{} needs at least one job id", name));
    for (const auto id : text::split(part.substr(colon + 1), ':')) {
      if (id.empty()) bad(text, "an empty job id");
      spec.terms.push_back(job_term(text, type->type, id));
    }
  }
  return spec;
}

}  // namespace slurmtwin
