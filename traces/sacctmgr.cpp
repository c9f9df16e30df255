#include "traces/sacctmgr.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <stdexcept>
#include <utility>

#include "traces/file_io.hpp"
#include "traces/read_report.hpp"
#include "traces/text.hpp"
#include "traces/time_format.hpp"

namespace slurmtwin {
namespace {

/// One argument of a sacctmgr command: Key=Value, Key+=Value, Key-=Value or a bare word (key empty).
struct Arg {
  std::string key;
  char op = '=';  // '=', '+' or '-'
  std::string value;
};

struct Where {
  std::string file;
  std::uint64_t line = 0;
};

[[noreturn]] void fail(const Where& w, const std::string& field, const std::string& what) {
  throw InputError(w.file, w.line, field, what);
}

bool is_space(char c) {
  return std::isspace(static_cast<unsigned char>(c)) != 0;
}

/// Shell-like words: whitespace separates, '...' and "..." quote (quotes removed), '#' at a word start
/// outside quotes begins a comment.
std::vector<std::string> split_words(std::string_view s, const Where& w) {
  std::vector<std::string> out;
  std::string cur;
  bool in_word = false;
  char quote = 0;
  for (const char c : s) {
    if (quote) {
      if (c == quote)
        quote = 0;
      else
        cur += c;
      continue;
    }
    if (c == '"' || c == '\'') {
      quote = c;
      in_word = true;
      continue;
    }
    if (is_space(c)) {
      if (in_word) out.push_back(std::move(cur));
      cur.clear();
      in_word = false;
      continue;
    }
    if (c == '#' && !in_word) break;
    cur += c;
    in_word = true;
  }
  if (quote) fail(w, "", "unterminated quote");
  if (in_word) out.push_back(std::move(cur));
  return out;
}

Arg to_arg(const std::string& word) {
  Arg a;
  const auto eq = word.find('=');
  if (eq == std::string::npos || eq == 0) {
    a.value = word;
    a.op = 0;
    return a;
  }
  a.key = word.substr(0, eq);
  a.value = word.substr(eq + 1);
  if (a.key.back() == '+' || a.key.back() == '-') {
    a.op = a.key.back();
    a.key.pop_back();
  }
  return a;
}

// ---------------------------------------------------------------------------------------------------
// option names: an exact (case-insensitive) name or alias, else a prefix of a name at least `min` long,
// first match in table order (as sacctmgr's strncasecmp(arg, name, MAX(len, min)) chains do)

enum class Opt {
  kUnknown,
  kIgnore,  // accepted, no effect on scheduling (Description, Organization)
  kName,
  kParent,
  kFairshare,
  kQos,
  kDefaultQos,
  kDefaultAccount,
  kAccount,
  kAdminLevel,
  kPartition,
  kCluster,
  kPriority,
  kUsageFactor,
  kPreempt,
  kPreemptMode,
  kPreemptExemptTime,
  kGraceTime,
  kFlags,
  kGrpTres,
  kGrpJobs,
  kGrpSubmit,
  kMaxJobs,
  kMaxSubmit,
  kMaxTresPerJob,
  kMaxTresPerUser,
  kMaxTresPerNode,
  kMaxWall,
  kGrpTresMins,
  kGrpTresRunMins,
  kMaxTresMinsPerJob,
  kMinTresPerJob,
  kMaxTresRunMinsPerUser,
  kMaxTresRunMinsPerAccount,
  kGrpJobsAccrue,
  kMaxJobsAccrue,
  kMaxJobsAccruePerAccount,
  kMaxJobsPerAccount,
  kMaxSubmitPerAccount,
  kMaxTresPerAccount,
};

struct OptName {
  std::string_view name;
  std::size_t min;  // shortest accepted prefix; 0 = exact only
  Opt opt;
};

const std::vector<OptName> kQosOpts = {
    {"Name", 1, Opt::kName},
    {"Names", 0, Opt::kName},
    {"Description", 1, Opt::kIgnore},
    {"Flags", 2, Opt::kFlags},
    {"GraceTime", 3, Opt::kGraceTime},
    {"GrpJobs", 4, Opt::kGrpJobs},
    {"GrpJobsAccrue", 8, Opt::kGrpJobsAccrue},
    {"GrpSubmitJobs", 4, Opt::kGrpSubmit},
    {"GrpTRES", 7, Opt::kGrpTres},
    {"GrpTRESMins", 8, Opt::kGrpTresMins},
    {"GrpTRESRunMins", 8, Opt::kGrpTresRunMins},
    {"MaxJobsAccruePerAccount", 17, Opt::kMaxJobsAccruePerAccount},
    {"MaxJobsAccruePA", 0, Opt::kMaxJobsAccruePerAccount},
    {"MaxJobsAccruePerUser", 17, Opt::kMaxJobsAccrue},
    {"MaxJobsAccruePU", 0, Opt::kMaxJobsAccrue},
    {"MaxJobsPerAccount", 11, Opt::kMaxJobsPerAccount},
    {"MaxJobsPA", 0, Opt::kMaxJobsPerAccount},
    {"MaxJobsPerUser", 4, Opt::kMaxJobs},
    {"MaxJobsPU", 0, Opt::kMaxJobs},
    {"MaxSubmitJobsPerAccount", 17, Opt::kMaxSubmitPerAccount},
    {"MaxSubmitJobsPA", 0, Opt::kMaxSubmitPerAccount},
    {"MaxSubmitJobsPerUser", 4, Opt::kMaxSubmit},
    {"MaxSubmitJobsPU", 0, Opt::kMaxSubmit},
    {"MaxSubmitJobs", 0, Opt::kMaxSubmit},
    {"MaxTRESPerJob", 7, Opt::kMaxTresPerJob},
    {"MaxTRES", 0, Opt::kMaxTresPerJob},
    {"MaxTRESPJ", 0, Opt::kMaxTresPerJob},
    {"MaxTRESPerAccount", 11, Opt::kMaxTresPerAccount},
    {"MaxTRESPA", 0, Opt::kMaxTresPerAccount},
    {"MaxTRESPerNode", 11, Opt::kMaxTresPerNode},
    {"MaxTRESPN", 0, Opt::kMaxTresPerNode},
    {"MaxTRESPerUser", 11, Opt::kMaxTresPerUser},
    {"MaxTRESPU", 0, Opt::kMaxTresPerUser},
    {"MaxTRESMinsPerJob", 8, Opt::kMaxTresMinsPerJob},
    {"MaxTRESRunMinsPA", 16, Opt::kMaxTresRunMinsPerAccount},
    {"MaxTRESRunMinsPU", 8, Opt::kMaxTresRunMinsPerUser},
    {"MinTRESPerJob", 7, Opt::kMinTresPerJob},
    {"MaxWall", 4, Opt::kMaxWall},
    {"MaxWallDurationPerJob", 0, Opt::kMaxWall},
    {"Preempt", 0, Opt::kPreempt},
    {"PreemptMode", 8, Opt::kPreemptMode},
    {"PreemptExemptTime", 8, Opt::kPreemptExemptTime},
    {"Priority", 3, Opt::kPriority},
    {"UsageFactor", 6, Opt::kUsageFactor},
};

const std::vector<OptName> kAssocOpts = {
    {"Name", 1, Opt::kName},
    {"Names", 0, Opt::kName},
    {"Users", 1, Opt::kName},
    {"Accounts", 2, Opt::kAccount},
    {"Acct", 0, Opt::kAccount},
    {"AdminLevel", 2, Opt::kAdminLevel},
    {"Clusters", 1, Opt::kCluster},
    {"DefaultAccount", 8, Opt::kDefaultAccount},
    {"DefaultQOS", 3, Opt::kDefaultQos},
    {"Description", 0, Opt::kIgnore},
    {"Organization", 1, Opt::kIgnore},
    {"Coordinator", 0, Opt::kIgnore},  // in `sacctmgr dump` user lines: who administers, not scheduling
    {"DefaultWCKey", 0, Opt::kIgnore},
    {"WCKeys", 0, Opt::kIgnore},
    {"FairShare", 1, Opt::kFairshare},
    {"Shares", 1, Opt::kFairshare},
    {"GrpJobs", 4, Opt::kGrpJobs},
    {"GrpJobsAccrue", 8, Opt::kGrpJobsAccrue},
    {"GrpSubmitJobs", 4, Opt::kGrpSubmit},
    {"GrpTRES", 7, Opt::kGrpTres},
    {"GrpTRESMins", 8, Opt::kGrpTresMins},
    {"GrpTRESRunMins", 8, Opt::kGrpTresRunMins},
    {"MaxJobs", 4, Opt::kMaxJobs},
    {"MaxJobsAccrue", 8, Opt::kMaxJobsAccrue},
    {"MaxSubmitJobs", 4, Opt::kMaxSubmit},
    {"MaxTRESPerJob", 7, Opt::kMaxTresPerJob},
    {"MaxTRES", 0, Opt::kMaxTresPerJob},
    {"MaxTRESPJ", 0, Opt::kMaxTresPerJob},
    {"MaxTRESPerNode", 11, Opt::kMaxTresPerNode},
    {"MaxTRESPN", 0, Opt::kMaxTresPerNode},
    {"MaxTRESMinsPerJob", 8, Opt::kMaxTresMinsPerJob},
    {"MaxWallDurationPerJob", 4, Opt::kMaxWall},
    {"Parent", 3, Opt::kParent},
    {"Partitions", 3, Opt::kPartition},
    {"Priority", 3, Opt::kPriority},
    {"QosLevel", 1, Opt::kQos},
};

Opt match_opt(std::string_view key, const std::vector<OptName>& table) {
  for (const auto& o : table)
    if (text::iequals(key, o.name)) return o.opt;
  for (const auto& o : table)
    if (o.min > 0 && key.size() >= o.min && key.size() <= o.name.size() &&
        text::iequals(key, o.name.substr(0, key.size())))
      return o.opt;
  return Opt::kUnknown;
}

std::vector<std::string> split_list(std::string_view s, bool lower) {
  std::vector<std::string> out;
  for (auto item : text::split(s, ',')) {
    item = text::trim(item);
    if (item.empty()) continue;
    auto v = lower ? text::to_lower(item) : std::string(item);
    if (std::find(out.begin(), out.end(), v) == out.end()) out.push_back(std::move(v));
  }
  return out;
}

/// A limit value: -1 clears it (nullopt), else an integer >= 0.
std::optional<std::int64_t> to_limit(const Arg& a, const Where& w) {
  const auto v = text::parse_int(a.value);
  if (!v || *v < -1) fail(w, a.key, fmt::format("'{}' is not a count (or -1 to clear)", a.value));
  if (*v == -1) return std::nullopt;
  return *v;
}

std::uint32_t to_u32(const Arg& a, const Where& w) {
  const auto v = text::parse_int(a.value);
  if (!v || *v < -1 || *v > std::numeric_limits<std::uint32_t>::max())
    fail(w, a.key, fmt::format("'{}' is not a non-negative integer", a.value));
  return *v == -1 ? 0 : static_cast<std::uint32_t>(*v);
}

/// "cpu=10,gres/gpu=2"; a TRES set to -1 is removed. Other TRES already in `m` stay.
void apply_tres(const Arg& a, const Where& w, TresMap& m) {
  if (text::trim(a.value) == "-1") {
    m.clear();
    return;
  }
  std::string keep;
  for (auto item : text::split(a.value, ',')) {
    item = text::trim(item);
    const auto eq = item.find('=');
    if (eq != std::string_view::npos && text::trim(item.substr(eq + 1)) == "-1") {
      m.erase(text::to_lower(text::trim(item.substr(0, eq))));
      continue;
    }
    if (!keep.empty()) keep += ',';
    keep += item;
  }
  try {
    for (auto& [k, v] : parse_tres_counts(keep)) m[k] = v;
  } catch (const std::invalid_argument& e) {
    fail(w, a.key, e.what());
  }
}

Shares to_shares(const Arg& a, const Where& w) {
  if (text::iequals(text::trim(a.value), "parent")) return {1, true};
  const auto v = text::parse_int(a.value);
  if (!v || *v < -1 || *v > std::numeric_limits<std::uint32_t>::max())
    fail(w, a.key, fmt::format("'{}' is not a share count or 'parent'", a.value));
  if (*v == -1) return {};
  return {static_cast<std::uint32_t>(*v), false};
}

std::string to_admin_level(const Arg& a, const Where& w) {
  const auto v = text::to_lower(text::trim(a.value));
  if (v == "none") return "None";
  if (v == "operator") return "Operator";
  if (v == "admin" || v == "administrator") return "Administrator";
  fail(w, a.key, fmt::format("'{}' is not None, Operator or Administrator", a.value));
}

// The options that set a TRES-count limit, and the field each sets.
const std::array<std::pair<Opt, TresMap Limits::*>, 11> kTresOpts = {{
    {Opt::kGrpTres, &Limits::grp_tres},
    {Opt::kMaxTresPerJob, &Limits::max_tres_per_job},
    {Opt::kMaxTresPerUser, &Limits::max_tres_per_user},
    {Opt::kMaxTresPerAccount, &Limits::max_tres_per_account},
    {Opt::kMaxTresPerNode, &Limits::max_tres_per_node},
    {Opt::kGrpTresMins, &Limits::grp_tres_mins},
    {Opt::kGrpTresRunMins, &Limits::grp_tres_run_mins},
    {Opt::kMaxTresMinsPerJob, &Limits::max_tres_mins_per_job},
    {Opt::kMinTresPerJob, &Limits::min_tres_per_job},
    {Opt::kMaxTresRunMinsPerUser, &Limits::max_tres_run_mins_per_user},
    {Opt::kMaxTresRunMinsPerAccount, &Limits::max_tres_run_mins_per_account},
}};

/// Applies a limit option to `l`; false when `opt` is not a limit.
bool apply_limit(Opt opt, const Arg& a, const Where& w, Limits& l) {
  for (const auto& [o, field] : kTresOpts)
    if (o == opt) {
      apply_tres(a, w, l.*field);
      return true;
    }
  switch (opt) {
    case Opt::kGrpJobs:
      l.grp_jobs = to_limit(a, w);
      return true;
    case Opt::kGrpSubmit:
      l.grp_submit_jobs = to_limit(a, w);
      return true;
    case Opt::kMaxJobs:
      l.max_jobs_per_user = to_limit(a, w);
      return true;
    case Opt::kMaxSubmit:
      l.max_submit_jobs_per_user = to_limit(a, w);
      return true;
    case Opt::kMaxJobsPerAccount:
      l.max_jobs_per_account = to_limit(a, w);
      return true;
    case Opt::kMaxSubmitPerAccount:
      l.max_submit_jobs_per_account = to_limit(a, w);
      return true;
    case Opt::kGrpJobsAccrue:
      l.grp_jobs_accrue = to_limit(a, w);
      return true;
    case Opt::kMaxJobsAccrue:
      l.max_jobs_accrue_per_user = to_limit(a, w);
      return true;
    case Opt::kMaxJobsAccruePerAccount:
      l.max_jobs_accrue_per_account = to_limit(a, w);
      return true;
    case Opt::kMaxWall: {
      if (text::trim(a.value) == "-1") {
        l.max_wall.reset();
        return true;
      }
      const auto d = parse_slurm_duration(a.value);
      if (!d || *d == kUnsetTime) fail(w, a.key, fmt::format("'{}' is not a Slurm time", a.value));
      if (*d == kUnlimited)
        l.max_wall.reset();
      else
        l.max_wall = *d;
      return true;
    }
    default:
      return false;
  }
}

const std::vector<std::string> kQosFlags = {
    "DenyOnLimit", "EnforceUsageThreshold", "NoDecay",           "NoReserve",
    "OverPartQOS", "PartitionMaxNodes",     "PartitionMinNodes", "PartitionTimeLimit",
    "Relative",    "RequiresReservation",   "UsageFactorSafe"};

/// Executes parsed commands against a Site.
class Executor {
 public:
  Executor(Site& site, std::vector<std::string>& warnings) : site_(site), warnings_(warnings) {
    if (site_.qos.empty()) {  // a fresh slurmdbd has the QOS "normal"
      Qos normal;
      normal.name = "normal";
      site_.qos.push_back(normal);
    }
    if (!site_.find_account("root")) {
      Account root;
      root.name = "root";
      root.parent = "";
      site_.accounts.insert(site_.accounts.begin(), root);
    }
  }

  void run_line(std::string_view line, const Where& w) {
    auto words = split_words(line, w);
    std::size_t i = 0;
    if (i < words.size() && text::iequals(words[i], "sacctmgr")) ++i;
    while (i < words.size() && words[i].size() > 1 && words[i][0] == '-') ++i;  // -i, --immediate, -Q
    if (i >= words.size()) return;
    const auto verb = text::to_lower(words[i++]);
    if (verb == "list" || verb == "show") return;
    if (i >= words.size()) fail(w, verb, "no entity (qos, cluster, account, user) named");
    const auto entity = text::to_lower(words[i++]);
    std::vector<Arg> cond, set;
    bool in_set = verb == "add" || verb == "create";
    for (; i < words.size(); ++i) {
      if (text::iequals(words[i], "where")) {
        in_set = false;
        continue;
      }
      if (text::iequals(words[i], "set")) {
        in_set = true;
        continue;
      }
      (in_set ? set : cond).push_back(to_arg(words[i]));
    }
    const auto kind = entity_kind(entity);
    if (verb == "add" || verb == "create") {
      if (kind == 'q') return add_qos(set, w);
      if (kind == 'c') return add_cluster(set, w);
      if (kind == 'a') return add_account(set, w);
      if (kind == 'u') return add_user(set, w);
    } else if (verb == "modify" || verb == "update") {
      if (kind == 'q') return modify_qos(cond, set, w);
      if (kind == 'a') return modify_account(cond, set, w);
      if (kind == 'u') return modify_user(cond, set, w);
      if (kind == 'c') return modify_cluster(set, w);
    } else if (verb == "remove" || verb == "delete") {
      if (kind == 'q') return remove_qos(cond, w);
      if (kind == 'a') return remove_account(cond, w);
      if (kind == 'u') return remove_user(cond, w);
    } else if (verb != "dump" && verb != "load" && verb != "archive" && verb != "reconfigure" &&
               verb != "shutdown" && verb != "clear") {
      fail(w, verb, "unknown sacctmgr command");
    }
    warn_once(verb + " " + entity, w, fmt::format("'sacctmgr {} {}' is not modelled; ignored", verb, entity));
  }

  /// Said after "unknown QOS 'x'" (where the QOS should have come from).
  void set_qos_hint(std::string hint) { qos_hint_ = std::move(hint); }

  /// One line of a `sacctmgr dump` file: `Cluster - 'c'`, `Account - 'a'` or `User - 'u'` with its
  /// options, under the account of the last `Parent - 'p'` line. A user's DefaultAccount is recorded in
  /// `default_accounts` (it may name an account the dump lists later) instead of adding an association.
  void dump_line(std::string_view kind, const std::string& name, const std::string& parent,
                 std::vector<Arg> args, const Where& w,
                 std::map<std::string, std::string>& default_accounts) {
    args.insert(args.begin(), Arg{"Name", '=', name});
    if (kind == "cluster") return add_cluster(args, w);
    if (parent.empty()) fail(w, std::string(kind), "no 'Parent - ...' line before it");
    if (kind == "account") {
      args.push_back({"Parent", '=', parent});
      return add_account(args, w);
    }
    std::erase_if(args, [&](const Arg& a) {
      if (!text::iequals(a.key, "DefaultAccount")) return false;
      default_accounts[name] = text::to_lower(text::trim(a.value));
      return true;
    });
    args.push_back({"Account", '=', parent});
    // The root user association that `add cluster` made is the dump's `User - 'root'` under root.
    const auto it = std::find_if(
        site_.associations.begin(), site_.associations.end(),
        [&](const UserAssoc& u) { return u.user == name && u.account == parent && u.partition.empty(); });
    if (it != site_.associations.end() && name == "root") {
      site_.associations.erase(it);
      std::erase_if(site_.users,
                    [](const User& u) { return u.name == "root"; });  // made again, with AdminLevel
    }
    add_user(args, w);
  }

  /// The rows of a `sacctmgr show qos -P` table, replacing the site's QOS: every name is created first,
  /// so that a Preempt list may name a QOS of a later row. Each row is (line, arguments by column).
  void qos_table(const std::vector<std::pair<std::uint64_t, std::vector<Arg>>>& rows,
                 const std::string& file) {
    site_.qos.clear();
    for (const auto& [line, args] : rows) {
      const Where w{file, line};
      const auto names = names_of(args, kQosOpts);
      if (names.size() != 1) fail(w, "Name", "a QOS row needs one name");
      if (site_.find_qos(names.front())) fail(w, "Name", fmt::format("QOS '{}' listed twice", names.front()));
      Qos q;
      q.name = names.front();
      site_.qos.push_back(q);
    }
    for (std::size_t i = 0; i < rows.size(); ++i)
      set_qos(site_.qos[i], rows[i].second, {file, rows[i].first});
  }

 private:
  Site& site_;
  std::vector<std::string>& warnings_;
  std::set<std::string> warned_;
  std::string qos_hint_;

  void warn(const Where& w, const std::string& what) {
    warnings_.push_back(fmt::format("{}:{}: {}", w.file, w.line, what));
  }
  void warn_once(const std::string& id, const Where& w, const std::string& what) {
    if (warned_.insert(text::to_lower(id)).second) warn(w, what);
  }
  void unmodelled(const Arg& a, const Where& w, std::string_view entity) {
    warn_once(std::string(entity) + ":" + a.key, w,
              fmt::format("sacctmgr {} option {} is not modelled; ignored", entity,
                          a.key.empty() ? a.value : a.key));
  }

  static char entity_kind(const std::string& e) {
    if (e == "qos") return 'q';
    if (e.rfind("cluster", 0) == 0) return 'c';
    if (e.rfind("account", 0) == 0 || e == "acct") return 'a';
    if (e.rfind("user", 0) == 0) return 'u';
    return '?';
  }

  Qos* qos(std::string_view name) { return const_cast<Qos*>(site_.find_qos(name)); }
  Account* account(std::string_view name) { return const_cast<Account*>(site_.find_account(name)); }
  User* user(std::string_view name) { return const_cast<User*>(site_.find_user(name)); }

  /// Names from bare words and Name=/Names=/Users= arguments.
  std::vector<std::string> names_of(const std::vector<Arg>& args, const std::vector<OptName>& table) {
    std::vector<std::string> out;
    for (const auto& a : args) {
      if (a.key.empty() || match_opt(a.key, table) == Opt::kName)
        for (auto& n : split_list(a.value, true))
          if (std::find(out.begin(), out.end(), n) == out.end()) out.push_back(std::move(n));
    }
    return out;
  }

  /// A QOS list argument: every name must exist. With += / -= it edits `current`.
  std::vector<std::string> qos_list(const Arg& a, const Where& w, const std::vector<std::string>& current) {
    auto names = split_list(a.value, true);
    if (names.size() == 1 && (names.front() == "-1" || names.front() == "''")) names.clear();
    for (const auto& n : names)
      if (!site_.find_qos(n)) fail(w, a.key, fmt::format("unknown QOS '{}'{}", n, qos_hint_));
    if (a.op == '=') return names;
    auto out = current;
    for (const auto& n : names) {
      const auto it = std::find(out.begin(), out.end(), n);
      if (a.op == '+' && it == out.end()) out.push_back(n);
      if (a.op == '-' && it != out.end()) out.erase(it);
    }
    return out;
  }

  std::string default_qos(const Arg& a, const Where& w) {
    auto v = text::to_lower(text::trim(a.value));
    if (v.empty() || v == "-1") return {};
    if (!site_.find_qos(v)) fail(w, a.key, fmt::format("unknown QOS '{}'{}", v, qos_hint_));
    return v;
  }

  /// The QOS an account's associations may use: its own list, else its parent's (recursively).
  std::vector<std::string> effective_qos(const std::string& account_name) const {
    const Account* a = site_.find_account(account_name);
    for (int guard = 0; a && guard < 1000; ++guard) {
      if (!a->qos.empty()) return a->qos;
      a = a->parent.empty() ? nullptr : site_.find_account(a->parent);
    }
    return {};
  }

  // ------------------------------------------------------------------------------------------------ QOS

  void set_qos(Qos& q, const std::vector<Arg>& args, const Where& w) {
    for (const auto& a : args) {
      const auto opt = a.key.empty() ? Opt::kName : match_opt(a.key, kQosOpts);
      if (opt == Opt::kName || opt == Opt::kIgnore) continue;
      if (apply_limit(opt, a, w, q.limits)) continue;
      switch (opt) {
        case Opt::kPriority:
          q.priority = to_u32(a, w);
          break;
        case Opt::kUsageFactor: {
          const auto v = text::parse_double(a.value);
          if (!v || *v < 0) fail(w, a.key, fmt::format("'{}' is not a non-negative number", a.value));
          q.usage_factor = *v;
          break;
        }
        case Opt::kPreempt: {
          q.preempt = qos_list(a, w, q.preempt);
          break;
        }
        case Opt::kPreemptMode:
          try {
            q.preempt_mode = parse_preempt_mode(a.value);
          } catch (const std::invalid_argument& e) {
            fail(w, a.key, e.what());
          }
          break;
        case Opt::kPreemptExemptTime: {
          if (text::trim(a.value) == "-1") {
            q.preempt_exempt_time.reset();
            break;
          }
          const auto d = parse_slurm_duration(a.value);
          if (!d || *d == kUnsetTime || *d == kUnlimited)
            fail(w, a.key, fmt::format("'{}' is not a Slurm time", a.value));
          q.preempt_exempt_time = *d;
          break;
        }
        case Opt::kGraceTime:
          q.grace_time = to_u32(a, w);
          break;
        case Opt::kFlags: {
          std::set<std::string> flags;
          for (const auto& f : split_list(a.value, false)) {
            if (text::iequals(f, "-1") || text::iequals(f, "None")) continue;
            const auto it = std::find_if(kQosFlags.begin(), kQosFlags.end(),
                                         [&](const std::string& k) { return text::iequals(k, f); });
            if (it == kQosFlags.end()) fail(w, a.key, fmt::format("unknown QOS flag '{}'", f));
            flags.insert(*it);
          }
          if (a.op == '=') q.flags = flags;
          for (const auto& f : flags) a.op == '-' ? (void)q.flags.erase(f) : (void)q.flags.insert(f);
          break;
        }
        default:
          unmodelled(a, w, "qos");
      }
    }
  }

  void add_qos(const std::vector<Arg>& args, const Where& w) {
    const auto names = names_of(args, kQosOpts);
    if (names.empty()) fail(w, "Name", "add qos needs a name");
    for (const auto& n : names) {
      if (site_.find_qos(n)) {
        warn(w, fmt::format("QOS '{}' already exists; not changed", n));
        continue;
      }
      Qos q;
      q.name = n;
      site_.qos.push_back(q);  // first, so that Preempt may name it
      set_qos(site_.qos.back(), args, w);
    }
  }

  void modify_qos(const std::vector<Arg>& cond, const std::vector<Arg>& set, const Where& w) {
    for (const auto& n : names_of(cond, kQosOpts)) {
      Qos* q = qos(n);
      if (!q) {
        warn(w, fmt::format("QOS '{}' does not exist; nothing modified", n));
        continue;
      }
      set_qos(*q, set, w);
    }
  }

  void remove_qos(const std::vector<Arg>& cond, const Where& w) {
    for (const auto& n : names_of(cond, kQosOpts)) {
      const auto it =
          std::find_if(site_.qos.begin(), site_.qos.end(), [&](const Qos& q) { return q.name == n; });
      if (it == site_.qos.end()) {
        warn(w, fmt::format("QOS '{}' does not exist; nothing removed", n));
        continue;
      }
      site_.qos.erase(it);
      // slurmdbd drops the QOS from every association and every Preempt list
      const auto drop = [&](std::vector<std::string>& v) {
        v.erase(std::remove(v.begin(), v.end(), n), v.end());
      };
      for (auto& q : site_.qos) drop(q.preempt);
      for (auto& a : site_.accounts) {
        drop(a.qos);
        if (a.default_qos == n) a.default_qos.clear();
      }
      for (auto& u : site_.associations) {
        drop(u.qos);
        if (u.default_qos == n) u.default_qos.clear();
      }
    }
  }

  // ------------------------------------------------------------------------------------------------
  // associations

  /// Applies association options to `shares`/`priority`/`qos`/`default_qos`/`limits`; returns false for
  /// options that are not association options.
  template <class Assoc>
  bool set_assoc(Assoc& a, Opt opt, const Arg& arg, const Where& w,
                 const std::vector<std::string>& inherited) {
    if (apply_limit(opt, arg, w, a.limits)) return true;
    switch (opt) {
      case Opt::kFairshare:
        a.shares = to_shares(arg, w);
        return true;
      case Opt::kPriority:
        a.priority = to_u32(arg, w);
        return true;
      case Opt::kQos:
        a.qos = qos_list(arg, w, a.qos.empty() ? inherited : a.qos);
        return true;
      case Opt::kDefaultQos:
        a.default_qos = default_qos(arg, w);
        return true;
      default:
        return false;
    }
  }

  void add_cluster(const std::vector<Arg>& args, const Where& w) {
    const auto names = names_of(args, kAssocOpts);
    if (names.size() != 1) fail(w, "Name", "add cluster needs exactly one name");
    if (site_.cluster_name == "cluster")
      site_.cluster_name = names.front();
    else if (site_.cluster_name != names.front())
      warn(w, fmt::format("cluster '{}' differs from ClusterName '{}'; its root association is used",
                          names.front(), site_.cluster_name));
    Account& root = *account("root");
    bool qos_given = false;
    for (const auto& a : args) {
      const auto opt = a.key.empty() ? Opt::kName : match_opt(a.key, kAssocOpts);
      if (opt == Opt::kName || opt == Opt::kIgnore) continue;
      qos_given |= opt == Opt::kQos;
      if (!set_assoc(root, opt, a, w, {})) unmodelled(a, w, "cluster");
    }
    // slurmdbd gives a new cluster's root association the default QOS list ("normal").
    if (!qos_given && root.qos.empty() && site_.find_qos("normal")) root.qos = {"normal"};
    // ... and a user association for the Linux user root under it (Fairshare=1). Fair Tree ranks it
    // with every other user association (seen in sshare on real Slurm 22.05, docs/fidelity.md).
    const auto has_root_user =
        std::any_of(site_.associations.begin(), site_.associations.end(),
                    [](const UserAssoc& u) { return u.user == "root" && u.account == "root"; });
    if (!has_root_user) {
      // slurmdbd makes the Linux user root an Administrator (`sacctmgr dump` says so)
      if (!site_.find_user("root")) site_.users.push_back({"root", "root", "Administrator"});
      UserAssoc u;
      u.user = "root";
      u.account = "root";
      site_.associations.push_back(std::move(u));
    }
  }

  void modify_cluster(const std::vector<Arg>& set, const Where& w) {
    Account& root = *account("root");
    for (const auto& a : set) {
      const auto opt = match_opt(a.key, kAssocOpts);
      if (opt == Opt::kIgnore) continue;
      if (!set_assoc(root, opt, a, w, {})) unmodelled(a, w, "cluster");
    }
  }

  bool is_ancestor(const std::string& maybe_ancestor, std::string name) const {
    for (int guard = 0; guard < 1000 && !name.empty(); ++guard) {
      if (name == maybe_ancestor) return true;
      const Account* a = site_.find_account(name);
      name = a ? a->parent : "";
    }
    return false;
  }

  void add_account(const std::vector<Arg>& args, const Where& w) {
    const auto names = names_of(args, kAssocOpts);
    if (names.empty()) fail(w, "Name", "add account needs a name");
    Account proto;
    for (const auto& a : args) {
      const auto opt = a.key.empty() ? Opt::kName : match_opt(a.key, kAssocOpts);
      if (opt != Opt::kParent) continue;
      proto.parent = text::to_lower(text::trim(a.value));
      if (!site_.find_account(proto.parent))
        fail(w, a.key, fmt::format("parent account '{}' does not exist", proto.parent));
    }
    for (const auto& a : args) {
      const auto opt = a.key.empty() ? Opt::kName : match_opt(a.key, kAssocOpts);
      if (opt == Opt::kName || opt == Opt::kIgnore || opt == Opt::kParent || opt == Opt::kCluster) continue;
      if (!set_assoc(proto, opt, a, w, effective_qos(proto.parent))) unmodelled(a, w, "account");
    }
    for (const auto& n : names) {
      if (site_.find_account(n)) {
        warn(w, fmt::format("account '{}' already exists; not changed", n));
        continue;
      }
      proto.name = n;
      site_.accounts.push_back(proto);
    }
  }

  void modify_account(const std::vector<Arg>& cond, const std::vector<Arg>& set, const Where& w) {
    // Only the accounts' own associations change (sacctmgr adds an empty user to the condition).
    for (const auto& n : names_of(cond, kAssocOpts)) {
      Account* acc = account(n);
      if (!acc) {
        warn(w, fmt::format("account '{}' does not exist; nothing modified", n));
        continue;
      }
      for (const auto& a : set) {
        const auto opt = match_opt(a.key, kAssocOpts);
        if (opt == Opt::kIgnore) continue;
        if (opt == Opt::kParent) {
          const auto parent = text::to_lower(text::trim(a.value));
          if (!site_.find_account(parent))
            fail(w, a.key, fmt::format("parent account '{}' does not exist", parent));
          if (n == "root" || is_ancestor(n, parent))
            fail(w, a.key, fmt::format("'{}' cannot be a parent of '{}'", parent, n));
          acc->parent = parent;
          continue;
        }
        if (!set_assoc(*acc, opt, a, w, effective_qos(acc->parent))) unmodelled(a, w, "account");
      }
    }
  }

  void remove_account(const std::vector<Arg>& cond, const Where& w) {
    for (const auto& n : names_of(cond, kAssocOpts)) {
      if (n == "root") fail(w, "Name", "the root account cannot be removed");
      if (!site_.find_account(n)) {
        warn(w, fmt::format("account '{}' does not exist; nothing removed", n));
        continue;
      }
      for (const auto& a : site_.accounts)
        if (a.parent == n) fail(w, "Name", fmt::format("account '{}' still has sub-account '{}'", n, a.name));
      std::erase_if(site_.accounts, [&](const Account& a) { return a.name == n; });
      std::erase_if(site_.associations, [&](const UserAssoc& u) { return u.account == n; });
      for (const auto& u : site_.users)
        if (u.default_account == n)
          warn(w, fmt::format("user '{}' loses its default account '{}'", u.name, n));
    }
  }

  void add_user(const std::vector<Arg>& args, const Where& w) {
    const auto names = names_of(args, kAssocOpts);
    if (names.empty()) fail(w, "Name", "add user needs a name");
    // sacctmgr appends DefaultAccount to the account list, so the user gets an association there too;
    // without DefaultAccount the first account becomes the default.
    std::vector<std::string> accounts, partitions;
    std::string default_account, admin = "None";
    const auto add_account_name = [&](const std::string& a) {
      if (std::find(accounts.begin(), accounts.end(), a) == accounts.end()) accounts.push_back(a);
    };
    for (const auto& a : args) {
      const auto opt = a.key.empty() ? Opt::kName : match_opt(a.key, kAssocOpts);
      if (opt == Opt::kDefaultAccount) {
        default_account = text::to_lower(text::trim(a.value));
        add_account_name(default_account);
      } else if (opt == Opt::kAccount) {
        for (const auto& n : split_list(a.value, true)) add_account_name(n);
      } else if (opt == Opt::kPartition) {
        partitions = split_list(a.value, false);
      } else if (opt == Opt::kAdminLevel) {
        admin = to_admin_level(a, w);
      }
    }
    if (accounts.empty()) fail(w, "Account", "add user needs an Account or DefaultAccount");
    if (default_account.empty()) default_account = accounts.front();
    for (const auto& acc : accounts)
      if (!site_.find_account(acc)) fail(w, "Account", fmt::format("account '{}' does not exist", acc));
    if (partitions.empty()) partitions.emplace_back();

    for (const auto& n : names) {
      if (!site_.find_user(n)) site_.users.push_back({n, default_account, admin});
      for (const auto& acc : accounts) {
        for (const auto& part : partitions) {
          const auto exists = std::any_of(
              site_.associations.begin(), site_.associations.end(),
              [&](const UserAssoc& u) { return u.user == n && u.account == acc && u.partition == part; });
          if (exists) {
            warn(w, fmt::format("user '{}' already has an association with account '{}'", n, acc));
            continue;
          }
          UserAssoc u;
          u.user = n;
          u.account = acc;
          u.partition = part;
          for (const auto& a : args) {
            const auto opt = a.key.empty() ? Opt::kName : match_opt(a.key, kAssocOpts);
            if (opt == Opt::kName || opt == Opt::kIgnore || opt == Opt::kDefaultAccount ||
                opt == Opt::kAccount || opt == Opt::kPartition || opt == Opt::kAdminLevel ||
                opt == Opt::kCluster)
              continue;
            if (!set_assoc(u, opt, a, w, effective_qos(acc))) unmodelled(a, w, "user");
          }
          site_.associations.push_back(std::move(u));
        }
      }
    }
  }

  void modify_user(const std::vector<Arg>& cond, const std::vector<Arg>& set, const Where& w) {
    std::vector<std::string> accounts, partitions;
    for (const auto& a : cond) {
      const auto opt = a.key.empty() ? Opt::kName : match_opt(a.key, kAssocOpts);
      if (opt == Opt::kAccount)
        accounts = split_list(a.value, true);
      else if (opt == Opt::kPartition)
        partitions = split_list(a.value, false);
      else if (opt != Opt::kName && opt != Opt::kCluster)
        unmodelled(a, w, "user where");
    }
    const auto selected = [&](const UserAssoc& u) {
      return (accounts.empty() || std::find(accounts.begin(), accounts.end(), u.account) != accounts.end()) &&
             (partitions.empty() ||
              std::find(partitions.begin(), partitions.end(), u.partition) != partitions.end());
    };
    for (const auto& n : names_of(cond, kAssocOpts)) {
      User* usr = user(n);
      if (!usr) {
        warn(w, fmt::format("user '{}' does not exist; nothing modified", n));
        continue;
      }
      for (const auto& a : set) {
        const auto opt = match_opt(a.key, kAssocOpts);
        if (opt == Opt::kIgnore) continue;
        if (opt == Opt::kDefaultAccount) {
          const auto acc = text::to_lower(text::trim(a.value));
          const auto has = std::any_of(site_.associations.begin(), site_.associations.end(),
                                       [&](const UserAssoc& u) { return u.user == n && u.account == acc; });
          if (!has) fail(w, a.key, fmt::format("user '{}' has no association with account '{}'", n, acc));
          usr->default_account = acc;
          continue;
        }
        if (opt == Opt::kAdminLevel) {
          usr->admin_level = to_admin_level(a, w);
          continue;
        }
        bool any = false, handled = true;
        for (auto& u : site_.associations) {
          if (u.user != n || !selected(u)) continue;
          any = true;
          handled = set_assoc(u, opt, a, w, effective_qos(u.account));
          if (!handled) break;
        }
        if (!handled)
          unmodelled(a, w, "user");
        else if (!any)
          warn(w, fmt::format("user '{}' has no matching association; {} not set", n, a.key));
      }
    }
  }

  void remove_user(const std::vector<Arg>& cond, const Where& w) {
    std::vector<std::string> accounts;
    for (const auto& a : cond)
      if (!a.key.empty() && match_opt(a.key, kAssocOpts) == Opt::kAccount)
        accounts = split_list(a.value, true);
    for (const auto& n : names_of(cond, kAssocOpts)) {
      if (!site_.find_user(n)) {
        warn(w, fmt::format("user '{}' does not exist; nothing removed", n));
        continue;
      }
      std::erase_if(site_.associations, [&](const UserAssoc& u) {
        return u.user == n &&
               (accounts.empty() || std::find(accounts.begin(), accounts.end(), u.account) != accounts.end());
      });
      const auto left = std::any_of(site_.associations.begin(), site_.associations.end(),
                                    [&](const UserAssoc& u) { return u.user == n; });
      if (!left) std::erase_if(site_.users, [&](const User& u) { return u.name == n; });
    }
  }
};

// ---------------------------------------------------------------------------------------------------
// `sacctmgr -P show ...` tables and `sacctmgr dump` files

std::string column_key(std::string_view name) {
  std::string out;
  for (char c : name)
    if (!is_space(c)) out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

/// A '|' separated table as `sacctmgr -P` (or -p, which ends each line with '|') prints it.
struct PipeTable {
  std::vector<std::string> header;  // trimmed, as printed
  struct Row {
    std::uint64_t line = 0;
    std::vector<std::string_view> fields;  // one per header column, untrimmed
  };
  std::vector<Row> rows;
};

PipeTable read_pipe_table(std::string_view content, const std::string& file_name, const char* what) {
  PipeTable t;
  std::uint64_t line_no = 0;
  for (auto raw : text::split(content, '\n')) {
    ++line_no;
    if (!raw.empty() && raw.back() == '\r') raw.remove_suffix(1);
    if (text::trim(raw).empty()) continue;
    auto fields = text::split(raw, '|');
    if (t.header.empty()) {
      if (fields.size() > 1 && text::trim(fields.back()).empty()) fields.pop_back();
      // (one column has no '|'; the caller checks that the columns it needs are there)
      if (std::any_of(fields.begin(), fields.end(), [](std::string_view f) { return text::trim(f).empty(); }))
        throw InputError(file_name, line_no, "",
                         fmt::format("expected the '|' separated header of {} (sacctmgr -P)", what));
      for (const auto f : fields) t.header.emplace_back(text::trim(f));
      continue;
    }
    if (fields.size() == t.header.size() + 1 && text::trim(fields.back()).empty()) fields.pop_back();
    if (fields.size() != t.header.size())
      throw InputError(file_name, line_no, "",
                       fmt::format("{} fields where the header has {}", fields.size(), t.header.size()));
    t.rows.push_back({line_no, std::move(fields)});
  }
  if (t.header.empty()) throw InputError(file_name, 0, "", fmt::format("empty file: no {}", what));
  return t;
}

/// Splits a `sacctmgr dump` line at ':' outside '...' quotes, removing the quotes.
std::vector<std::string> split_dump_fields(std::string_view line, const Where& w) {
  std::vector<std::string> out(1);
  bool quoted = false;
  for (const char c : line) {
    if (c == '\'') {
      quoted = !quoted;
    } else if (c == ':' && !quoted) {
      out.emplace_back();
    } else {
      out.back() += c;
    }
  }
  if (quoted) fail(w, "", "unterminated quote");
  return out;
}

/// `sacctmgr show assoc` prints what an association inherits (QOS, Def QOS, the Max* limits) as if it
/// were its own. Values equal to what the parent account gives are cleared back to "inherited", the
/// form sacctmgr commands make: the same limits bind, and the site compares equal to the one its
/// commands describe.
void clear_inherited(std::vector<Account>& accounts, std::vector<UserAssoc>& assocs) {
  struct Given {
    std::vector<std::string> qos;
    std::string default_qos;
    Limits max;  // the Max* limits only
  };
  const auto by_name = [&](const std::string& n) -> const Account* {
    for (const auto& a : accounts)
      if (a.name == n) return &a;
    return nullptr;
  };
  // what account `name` gives its children, from the values as read (before any clearing)
  const auto given = [&](std::string name) {
    Given g;
    bool qos = false, def = false;
    for (int guard = 0; guard < 1000 && !name.empty(); ++guard) {
      const Account* a = by_name(name);
      if (!a) break;
      if (!qos && !a->qos.empty()) g.qos = a->qos, qos = true;
      if (!def && !a->default_qos.empty()) g.default_qos = a->default_qos, def = true;
      const Limits& l = a->limits;
      if (g.max.max_tres_per_job.empty()) g.max.max_tres_per_job = l.max_tres_per_job;
      if (g.max.max_tres_per_node.empty()) g.max.max_tres_per_node = l.max_tres_per_node;
      if (g.max.max_tres_mins_per_job.empty()) g.max.max_tres_mins_per_job = l.max_tres_mins_per_job;
      if (!g.max.max_jobs_per_user) g.max.max_jobs_per_user = l.max_jobs_per_user;
      if (!g.max.max_submit_jobs_per_user) g.max.max_submit_jobs_per_user = l.max_submit_jobs_per_user;
      if (!g.max.max_jobs_accrue_per_user) g.max.max_jobs_accrue_per_user = l.max_jobs_accrue_per_user;
      if (!g.max.max_wall) g.max.max_wall = l.max_wall;
      name = a->parent;
    }
    return g;
  };
  const auto sorted = [](std::vector<std::string> v) {
    std::sort(v.begin(), v.end());
    return v;
  };
  const auto clear = [&](auto& x, const Given& g) {
    if (!x.qos.empty() && sorted(x.qos) == sorted(g.qos)) x.qos.clear();
    if (!x.default_qos.empty() && x.default_qos == g.default_qos) x.default_qos.clear();
    Limits& l = x.limits;
    if (!l.max_tres_per_job.empty() && l.max_tres_per_job == g.max.max_tres_per_job)
      l.max_tres_per_job.clear();
    if (!l.max_tres_per_node.empty() && l.max_tres_per_node == g.max.max_tres_per_node)
      l.max_tres_per_node.clear();
    if (!l.max_tres_mins_per_job.empty() && l.max_tres_mins_per_job == g.max.max_tres_mins_per_job)
      l.max_tres_mins_per_job.clear();
    if (l.max_jobs_per_user && l.max_jobs_per_user == g.max.max_jobs_per_user) l.max_jobs_per_user.reset();
    if (l.max_submit_jobs_per_user && l.max_submit_jobs_per_user == g.max.max_submit_jobs_per_user)
      l.max_submit_jobs_per_user.reset();
    if (l.max_jobs_accrue_per_user && l.max_jobs_accrue_per_user == g.max.max_jobs_accrue_per_user)
      l.max_jobs_accrue_per_user.reset();
    if (l.max_wall && l.max_wall == g.max.max_wall) l.max_wall.reset();
  };
  std::vector<Given> from_parent;
  for (const auto& a : accounts) from_parent.push_back(given(a.parent));
  std::vector<Given> from_account;
  for (const auto& u : assocs) from_account.push_back(given(u.account));
  for (std::size_t i = 0; i < accounts.size(); ++i) clear(accounts[i], from_parent[i]);
  for (std::size_t i = 0; i < assocs.size(); ++i) clear(assocs[i], from_account[i]);
}

}  // namespace

void import_sacctmgr_script_text(std::string_view content, const std::string& file_name, Site& site,
                                 std::vector<std::string>& warnings) {
  Executor exec(site, warnings);
  std::uint64_t line_no = 0, start = 1;
  std::string logical;
  for (auto raw : text::split(content, '\n')) {
    ++line_no;
    if (!raw.empty() && raw.back() == '\r') raw.remove_suffix(1);
    while (!raw.empty() && is_space(raw.back())) raw.remove_suffix(1);
    if (logical.empty()) start = line_no;
    if (!raw.empty() && raw.back() == '\\') {
      logical.append(raw.substr(0, raw.size() - 1));
      logical += ' ';
      continue;
    }
    logical.append(raw);
    exec.run_line(logical, {file_name, start});
    logical.clear();
  }
  if (!logical.empty()) exec.run_line(logical, {file_name, start});
}

void import_sacctmgr_script(const std::string& path, Site& site, std::vector<std::string>& warnings) {
  import_sacctmgr_script_text(read_input_file(path), path, site, warnings);
}

void import_assoc_dump_text(std::string_view content, const std::string& file_name, Site& site,
                            std::vector<std::string>& warnings) {
  std::map<std::string, std::size_t> col;  // normalised column name -> index
  std::vector<Account> accounts;
  std::vector<UserAssoc> assocs;
  std::vector<std::pair<std::string, std::size_t>> depth_stack;      // (account, depth) for `tree` output
  std::vector<std::pair<std::uint64_t, std::string>> parent_checks;  // (line, account)
  std::set<std::string> warned;
  std::string cluster;
  bool tree = false;
  std::map<std::string, std::uint64_t> missing_qos;  // QOS the site lacks -> first line naming it
  const auto warn_once = [&](const std::string& id, std::uint64_t line, const std::string& what) {
    if (warned.insert(id).second) warnings.push_back(fmt::format("{}:{}: {}", file_name, line, what));
  };
  static const std::map<std::string, std::string> kAliases = {{"cluster", "cluster"},
                                                              {"account", "account"},
                                                              {"user", "user"},
                                                              {"partition", "partition"},
                                                              {"share", "share"},
                                                              {"fairshare", "share"},
                                                              {"priority", "priority"},
                                                              {"grpjobs", "grpjobs"},
                                                              {"grpjobsaccrue", "grpjobsaccrue"},
                                                              {"maxjobsaccrue", "maxjobsaccrue"},
                                                              {"grptres", "grptres"},
                                                              {"grpsubmit", "grpsubmit"},
                                                              {"grpsubmitjobs", "grpsubmit"},
                                                              {"maxjobs", "maxjobs"},
                                                              {"maxtres", "maxtres"},
                                                              {"maxtresperjob", "maxtres"},
                                                              {"maxtrespernode", "maxtrespernode"},
                                                              {"maxtrespn", "maxtrespernode"},
                                                              {"grptresmins", "grptresmins"},
                                                              {"grptresrunmins", "grptresrunmins"},
                                                              {"maxtresmins", "maxtresmins"},
                                                              {"maxtresminsperjob", "maxtresmins"},
                                                              {"maxsubmit", "maxsubmit"},
                                                              {"maxsubmitjobs", "maxsubmit"},
                                                              {"maxwall", "maxwall"},
                                                              {"maxwalldurationperjob", "maxwall"},
                                                              {"qos", "qos"},
                                                              {"defqos", "defqos"},
                                                              {"defaultqos", "defqos"},
                                                              {"parname", "parent"},
                                                              {"parentname", "parent"},
                                                              {"lineage", "lineage"}};
  const auto table = read_pipe_table(content, file_name, "sacctmgr show assoc");
  const auto& header = table.header;
  for (std::size_t i = 0; i < header.size(); ++i) {
    const auto it = kAliases.find(column_key(header[i]));
    if (it != kAliases.end()) col[it->second] = i;
  }
  if (!col.count("account")) throw InputError(file_name, 1, "Account", "the header lacks an Account column");
  if (!col.count("grpjobsaccrue") || !col.count("maxjobsaccrue"))
    warnings.push_back(
        fmt::format("{}:1: no column GrpJobsAccrue or MaxJobsAccrue (sacctmgr's default format "
                    "leaves them out): an accrue limit there is not read; add them to format=",
                    file_name));
  for (const auto& row : table.rows) {
    const auto line_no = row.line;
    const auto& fields = row.fields;
    const auto field = [&](const char* name) -> std::string_view {
      const auto it = col.find(name);
      return it == col.end() ? std::string_view{} : fields[it->second];
    };
    for (std::size_t i = 0; i < header.size(); ++i) {
      const auto key = column_key(header[i]);
      if (!kAliases.count(key) && !text::trim(fields[i]).empty() && key != "id" && key != "lft" &&
          key != "rgt")
        warn_once("col:" + key, line_no, fmt::format("column {} is not modelled; ignored", header[i]));
    }
    if (col.count("cluster")) {
      const auto c = text::to_lower(text::trim(field("cluster")));
      if (cluster.empty()) {
        cluster = c;
      } else if (c != cluster) {
        warn_once("clusters", line_no,
                  fmt::format("the dump holds several clusters; only '{}' is read", cluster));
        continue;
      }
    }
    const Where w{file_name, line_no};
    const auto raw_account = field("account");
    std::size_t depth = 0;
    while (depth < raw_account.size() && raw_account[depth] == ' ') ++depth;
    tree |= depth > 0;
    const auto account_name = text::to_lower(text::trim(raw_account));
    if (account_name.empty()) fail(w, "Account", "empty account");
    const auto user_name = text::to_lower(text::trim(field("user")));

    // the association options common to accounts and users
    Shares shares;
    std::uint32_t priority = 0;
    std::vector<std::string> qos_names;
    std::string def_qos;
    Limits limits;
    const auto arg = [&](const char* name, const char* key) {
      return Arg{key, '=', std::string(text::trim(field(name)))};
    };
    if (const auto v = arg("share", "Share"); !v.value.empty()) shares = to_shares(v, w);
    if (const auto v = arg("priority", "Priority"); !v.value.empty()) priority = to_u32(v, w);
    const std::pair<const char*, Opt> limit_cols[] = {{"grpjobs", Opt::kGrpJobs},
                                                      {"grptres", Opt::kGrpTres},
                                                      {"grpsubmit", Opt::kGrpSubmit},
                                                      {"maxjobs", Opt::kMaxJobs},
                                                      {"maxtres", Opt::kMaxTresPerJob},
                                                      {"maxtrespernode", Opt::kMaxTresPerNode},
                                                      {"maxsubmit", Opt::kMaxSubmit},
                                                      {"maxwall", Opt::kMaxWall},
                                                      {"grptresmins", Opt::kGrpTresMins},
                                                      {"grptresrunmins", Opt::kGrpTresRunMins},
                                                      {"maxtresmins", Opt::kMaxTresMinsPerJob},
                                                      {"grpjobsaccrue", Opt::kGrpJobsAccrue},
                                                      {"maxjobsaccrue", Opt::kMaxJobsAccrue}};
    for (const auto& [name, opt] : limit_cols) {
      const auto it = col.find(name);
      if (const auto v = arg(name, it == col.end() ? name : header[it->second].c_str()); !v.value.empty())
        apply_limit(opt, v, w, limits);
    }
    qos_names = split_list(field("qos"), true);
    def_qos = text::to_lower(text::trim(field("defqos")));
    for (const auto& q : qos_names)
      if (!site.find_qos(q)) missing_qos.emplace(q, line_no);
    if (!def_qos.empty() && !site.find_qos(def_qos)) missing_qos.emplace(def_qos, line_no);

    if (user_name.empty()) {
      Account a;
      a.name = account_name;
      a.shares = shares;
      a.priority = priority;
      a.qos = qos_names;
      a.default_qos = def_qos;
      a.limits = limits;
      if (account_name == "root") {
        a.parent = "";
      } else if (const auto p = text::to_lower(text::trim(field("parent"))); !p.empty()) {
        a.parent = p;
      } else if (const auto lineage = text::to_lower(text::trim(field("lineage"))); !lineage.empty()) {
        // Slurm 23.11+: "/dept/group/" for account group; the parent is the component before the last
        std::vector<std::string_view> path;
        for (const auto c : text::split(lineage, '/'))
          if (!c.empty()) path.push_back(c);
        a.parent = path.size() >= 2 ? std::string(path[path.size() - 2]) : "root";
      } else if (tree) {
        while (!depth_stack.empty() && depth_stack.back().second >= depth) depth_stack.pop_back();
        a.parent = depth_stack.empty() ? "root" : depth_stack.back().first;
      }
      if (tree) {
        while (!depth_stack.empty() && depth_stack.back().second >= depth) depth_stack.pop_back();
        depth_stack.emplace_back(account_name, depth);
      }
      if (std::any_of(accounts.begin(), accounts.end(), [&](const Account& x) { return x.name == a.name; }))
        fail(w, "Account", fmt::format("account '{}' listed twice", a.name));
      if (!a.parent.empty()) parent_checks.emplace_back(line_no, a.parent);
      accounts.push_back(std::move(a));
    } else {
      UserAssoc u;
      u.user = user_name;
      u.account = account_name;
      u.partition = std::string(text::trim(field("partition")));
      u.shares = shares;
      u.priority = priority;
      u.qos = qos_names;
      u.default_qos = def_qos;
      u.limits = limits;
      parent_checks.emplace_back(line_no, account_name);
      assocs.push_back(std::move(u));
    }
  }
  if (!std::any_of(accounts.begin(), accounts.end(), [](const Account& a) { return a.name == "root"; })) {
    Account root;
    root.name = "root";
    root.parent = "";
    accounts.insert(accounts.begin(), root);
  }
  for (const auto& check : parent_checks) {  // not a structured binding: clang 14 cannot capture one
    const auto& name = check.second;
    if (!std::any_of(accounts.begin(), accounts.end(), [&](const Account& a) { return a.name == name; }))
      throw InputError(file_name, check.first, "Account",
                       fmt::format("account '{}' has no account row", name));
  }
  if (!tree && !col.count("parent") && !col.count("lineage") && accounts.size() > 1)
    warnings.push_back(fmt::format(
        "{}: no Par Name column and no tree indentation: every account is placed under root", file_name));
  if (!missing_qos.empty()) {
    // Fail closed: a QOS made up here would have priority 0 and no limits, silently.
    std::string list;
    std::uint64_t first = 0;
    for (const auto& [q, line] : missing_qos) {
      list += (list.empty() ? "" : ",") + q;
      first = first == 0 ? line : std::min(first, line);
    }
    throw InputError(file_name, first, "QOS",
                     fmt::format("the associations name QOS the site does not define: {} (give them with "
                                 "--qos-dump, the output of `sacctmgr -P show qos`)",
                                 list));
  }
  clear_inherited(accounts, assocs);
  std::size_t guessed = 0;
  for (const auto& u : assocs) {
    if (site.find_user(u.user)) continue;
    // slurmdbd makes the Linux user root an Administrator
    site.users.push_back({u.user, u.account, u.user == "root" ? "Administrator" : "None"});
    guessed += u.user != "root";
  }
  if (guessed > 0)
    warnings.push_back(fmt::format(
        "{}: {} users added with their first association's account as default account", file_name, guessed));
  site.accounts = std::move(accounts);
  site.associations = std::move(assocs);
}

void import_assoc_dump(const std::string& path, Site& site, std::vector<std::string>& warnings) {
  import_assoc_dump_text(read_input_file(path), path, site, warnings);
}

void import_sacctmgr_dump_text(std::string_view content, const std::string& file_name, Site& site,
                               std::vector<std::string>& warnings) {
  Executor exec(site, warnings);
  exec.set_qos_hint(
      " (a sacctmgr dump names QOS without defining them: give them with --qos-dump, the output of "
      "`sacctmgr -P show qos`)");
  std::string parent;
  bool cluster_seen = false;
  std::map<std::string, std::string> default_accounts;  // user -> DefaultAccount
  std::map<std::string, std::uint64_t> user_lines;      // user -> the line that named it first
  std::uint64_t line_no = 0;
  for (auto raw : text::split(content, '\n')) {
    ++line_no;
    const auto line = text::trim(raw);
    if (line.empty() || line.front() == '#') continue;
    const Where w{file_name, line_no};
    auto fields = split_dump_fields(line, w);
    const auto& head = fields.front();
    const auto dash = head.find(" - ");
    if (dash == std::string::npos)
      fail(w, "", fmt::format("expected \"Cluster|Parent|Account|User - 'name'\", not '{}'", head));
    const auto kind = text::to_lower(text::trim(std::string_view(head).substr(0, dash)));
    const auto name = text::to_lower(text::trim(std::string_view(head).substr(dash + 3)));
    if (name.empty()) fail(w, head, "empty name");
    if (kind != "cluster" && kind != "parent" && kind != "account" && kind != "user")
      fail(w, std::string(text::trim(head.substr(0, dash))),
           "unknown line kind (a sacctmgr dump has Cluster, Parent, Account and User lines)");
    if (kind == "cluster") {
      if (cluster_seen) fail(w, "Cluster", "a second Cluster line: give one cluster's dump");
      cluster_seen = true;
    } else if (!cluster_seen) {
      fail(w, kind, "before the Cluster line");
    }
    if (kind == "parent") {
      if (!site.find_account(name)) fail(w, "Parent", fmt::format("account '{}' is not defined above", name));
      parent = name;
      continue;
    }
    std::vector<Arg> args;
    for (std::size_t i = 1; i < fields.size(); ++i) {
      auto a = to_arg(fields[i]);
      if (a.key.empty()) fail(w, fields[i], "expected Key=Value");
      args.push_back(std::move(a));
    }
    if (kind == "user") user_lines.emplace(name, line_no);
    exec.dump_line(kind, name, parent, std::move(args), w, default_accounts);
  }
  if (!cluster_seen)
    throw InputError(file_name, 0, "Cluster",
                     "no \"Cluster - 'name'\" line: not a `sacctmgr dump` file (a script of sacctmgr "
                     "commands goes to --sacctmgr)");
  for (const auto& entry : default_accounts) {  // not a structured binding: clang 14 cannot capture one
    const auto& user = entry.first;
    const auto& account = entry.second;
    const auto has = std::any_of(site.associations.begin(), site.associations.end(),
                                 [&](const UserAssoc& u) { return u.user == user && u.account == account; });
    if (!has)
      throw InputError(
          file_name, user_lines[user], "DefaultAccount",
          fmt::format("user '{}' has no association with its default account '{}'", user, account));
    for (auto& u : site.users)
      if (u.name == user) u.default_account = account;
  }
}

void import_sacctmgr_dump(const std::string& path, Site& site, std::vector<std::string>& warnings) {
  import_sacctmgr_dump_text(read_input_file(path), path, site, warnings);
}

void import_qos_table_text(std::string_view content, const std::string& file_name, Site& site,
                           std::vector<std::string>& warnings) {
  const auto table = read_pipe_table(content, file_name, "sacctmgr show qos");
  if (std::none_of(table.header.begin(), table.header.end(),
                   [](const std::string& h) { return text::iequals(h, "Name"); }))
    throw InputError(file_name, 1, "Name", "the header lacks a Name column");
  // sacctmgr's default columns leave these limits out: without them a QOS's limit there is not seen.
  std::string missing;
  for (const char* c :
       {"GrpJobsAccrue", "MaxJobsAccruePU", "MaxJobsAccruePA", "MaxTRESRunMinsPU", "MaxTRESRunMinsPA"})
    if (std::none_of(table.header.begin(), table.header.end(),
                     [&](const std::string& h) { return text::iequals(h, c); }))
      missing += fmt::format("{}{}", missing.empty() ? "" : ", ", c);
  if (!missing.empty())
    warnings.push_back(fmt::format(
        "{}:1: no column {} (sacctmgr's default format leaves them out): a QOS limit there is not read; "
        "export with `sacctmgr -P show qos format={}`",
        file_name, missing, kQosTableFormat));
  std::vector<std::pair<std::uint64_t, std::vector<Arg>>> rows;
  for (const auto& row : table.rows) {
    std::vector<Arg> args;
    for (std::size_t i = 0; i < table.header.size(); ++i) {
      const auto& key = table.header[i];
      std::string value(text::trim(row.fields[i]));
      if (value.empty() || text::iequals(key, "ID")) continue;
      // The table prints some values unlike the sacctmgr command that sets them.
      if (text::iequals(key, "GraceTime")) {  // "00:05:00" here, seconds in `sacctmgr modify qos`
        const auto d = parse_slurm_duration(value);
        if (!d || *d < 0) fail({file_name, row.line}, key, fmt::format("'{}' is not a Slurm time", value));
        value = std::to_string(*d);
      }
      if (text::iequals(key, "PreemptMode") && text::iequals(value, "cluster")) continue;  // = unset
      // a column named unlike the option that sets it
      const auto option = text::iequals(key, "MaxSubmitPU")   ? std::string("MaxSubmitJobsPU")
                          : text::iequals(key, "MaxSubmitPA") ? std::string("MaxSubmitJobsPA")
                                                              : key;
      args.push_back({option, '=', std::move(value)});
    }
    rows.emplace_back(row.line, std::move(args));
  }
  Executor exec(site, warnings);
  exec.qos_table(rows, file_name);
}

void import_qos_table(const std::string& path, Site& site, std::vector<std::string>& warnings) {
  import_qos_table_text(read_input_file(path), path, site, warnings);
}

}  // namespace slurmtwin
