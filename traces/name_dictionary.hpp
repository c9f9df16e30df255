#pragma once
// Interns names (users, accounts, partitions, QOS, ...) so that job records hold small indices.
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "traces/job_record.hpp"

namespace slurmtwin {

/// A bidirectional name <-> index map; indices are dense and assigned in first-seen order.
class NameDictionary {
 public:
  /// Index of `name`, adding it if new.
  NameIndex intern(std::string_view name);
  /// Index of `name`, or kNoName.
  NameIndex find(std::string_view name) const;
  /// The name at `index`; "" for kNoName.
  const std::string& name(NameIndex index) const;
  std::size_t size() const { return names_.size(); }
  const std::vector<std::string>& names() const { return names_; }

 private:
  struct Hash {
    using is_transparent = void;
    std::size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  std::vector<std::string> names_;
  std::unordered_map<std::string, NameIndex, Hash, std::equal_to<>> index_;
};

}  // namespace slurmtwin
