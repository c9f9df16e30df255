#pragma once
// sacctmgr importers: scripts of sacctmgr commands (QOS, cluster, accounts, users) and
// `sacctmgr -P show associations` dumps, applied to a Site's QOS and association tree.
#include <string>
#include <string_view>
#include <vector>

#include "traces/site.hpp"

namespace slurmtwin {

/// Runs the sacctmgr commands of the script at `path` against `site` as slurmdbd would: add / create,
/// modify / update and remove / delete of qos, cluster, account and user (keywords case-insensitive,
/// optional leading "sacctmgr" and flags such as -i, Where/Set clauses, quoted values, += and -=);
/// list / show lines are ignored. A fresh database is assumed when `site` has no QOS: the QOS "normal"
/// and the root account exist before the first command. Account, QOS and user names are lower-cased.
/// Commands that sacctmgr would refuse (unknown parent, account or QOS; bad value) throw InputError
/// naming file:line and the key; harmless no-ops (adding what exists, options not modelled) warn.
/// The site is not validate()d.
void import_sacctmgr_script(const std::string& path, Site& site, std::vector<std::string>& warnings);
/// The same from text; `file_name` names the content in messages.
void import_sacctmgr_script_text(std::string_view content, const std::string& file_name, Site& site,
                                 std::vector<std::string>& warnings);

/// Reads `sacctmgr -P show associations` / `sacctmgr -p list associations format=...` output (a '|'
/// separated header line, then one association per line) and replaces site.accounts and
/// site.associations with it. Recognised columns (case-insensitive): Cluster, Account, User, Partition,
/// Share|FairShare, Priority, GrpJobs, GrpTRES, GrpSubmit|GrpSubmitJobs, MaxJobs, MaxTRES|MaxTRESPerJob,
/// MaxTRESPerNode, MaxSubmit|MaxSubmitJobs, MaxWall, QOS, Def QOS|DefaultQOS, Par Name|ParentName.
/// An account's parent is the Par Name column, else the `tree` indentation of Account, else root.
/// Users not yet in site.users are added with their first association's account as default account;
/// QOS that the site lacks are added with default settings. Each adds one warning.
void import_assoc_dump(const std::string& path, Site& site, std::vector<std::string>& warnings);
/// The same from text; `file_name` names the content in messages.
void import_assoc_dump_text(std::string_view content, const std::string& file_name, Site& site,
                            std::vector<std::string>& warnings);

}  // namespace slurmtwin
