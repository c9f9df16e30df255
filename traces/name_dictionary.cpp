#include "traces/name_dictionary.hpp"

namespace slurmtwin {

NameIndex NameDictionary::intern(std::string_view name) {
  if (auto it = index_.find(name); it != index_.end()) return it->second;
  const auto index = static_cast<NameIndex>(names_.size());
  names_.emplace_back(name);
  index_.emplace(names_.back(), index);
  return index;
}

NameIndex NameDictionary::find(std::string_view name) const {
  auto it = index_.find(name);
  return it == index_.end() ? kNoName : it->second;
}

const std::string& NameDictionary::name(NameIndex index) const {
  static const std::string kEmpty;
  return index == kNoName || index >= names_.size() ? kEmpty : names_[index];
}

}  // namespace slurmtwin
