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
/// MaxTRESPerNode, MaxTRESMins, GrpTRESMins, GrpTRESRunMins, MaxSubmit|MaxSubmitJobs, MaxWall, QOS,
/// Def QOS|DefaultQOS, Par Name|ParentName.
/// An account's parent is the Par Name column, else the `tree` indentation of Account, else root.
/// An account's parent may also come from Lineage ("/dept/group/", Slurm 23.11+).
/// Users not yet in site.users are added with their first association's account as default account
/// (one warning). A QOS the site lacks throws InputError: QOS come from import_qos_table.
void import_assoc_dump(const std::string& path, Site& site, std::vector<std::string>& warnings);
/// The same from text; `file_name` names the content in messages.
void import_assoc_dump_text(std::string_view content, const std::string& file_name, Site& site,
                            std::vector<std::string>& warnings);

/// Reads the flat file of `sacctmgr dump CLUSTER file=F` (`Cluster - 'c':Fairshare=1:QOS='normal'`, then
/// `Parent - 'p'` sections of `Account - 'a':...` and `User - 'u':DefaultAccount='a':...` lines, limits as
/// sacctmgr options; MaxWallDurationPerJob in minutes) into the site's account tree and associations.
/// A dump names QOS but does not define them: they must be in the site already (import_qos_table);
/// an unknown one, a Parent not defined above, a second cluster or a line of another kind throw
/// InputError naming file:line. Options that do not affect scheduling (Description, Organization,
/// Coordinator, WCKeys) are ignored; limits not modelled (GrpWall, MaxTRESRunMins, ...) warn.
void import_sacctmgr_dump(const std::string& path, Site& site, std::vector<std::string>& warnings);
/// The same from text; `file_name` names the content in messages.
void import_sacctmgr_dump_text(std::string_view content, const std::string& file_name, Site& site,
                               std::vector<std::string>& warnings);

/// Reads `sacctmgr -P show qos` (any column set with a Name column, in any order; -p's trailing '|'
/// accepted) and replaces the site's QOS with its rows: Priority, GraceTime, Preempt, PreemptMode
/// ("cluster" = unset), PreemptExemptTime, Flags, UsageFactor and the limits the simulator enforces.
/// Columns not modelled that hold a value warn once each (MaxTRESPA, GrpWall, ...); a table without
/// the columns of enforced limits that sacctmgr leaves out by default warns once, naming them and
/// kQosTableFormat.
void import_qos_table(const std::string& path, Site& site, std::vector<std::string>& warnings);
/// The `format=` of `sacctmgr -P show qos` that lists every QOS column the import reads: sacctmgr's
/// default columns without the accrue limits and MaxTRESRunMinsPU/PA, which it leaves out.
inline constexpr const char* kQosTableFormat =
    "Name,Priority,GraceTime,Preempt,PreemptExemptTime,PreemptMode,Flags,UsageThres,UsageFactor,GrpTRES,"
    "GrpTRESMins,GrpTRESRunMins,GrpJobs,GrpJobsAccrue,GrpSubmit,GrpWall,MaxTRES,MaxTRESPerNode,MaxTRESMins,"
    "MaxWall,MaxTRESPU,MaxJobsPU,MaxJobsAccruePU,MaxSubmitPU,MaxTRESRunMinsPU,MaxTRESPA,MaxJobsPA,"
    "MaxJobsAccruePA,MaxSubmitPA,MaxTRESRunMinsPA,MinTRES";
/// The same from text; `file_name` names the content in messages.
void import_qos_table_text(std::string_view content, const std::string& file_name, Site& site,
                           std::vector<std::string>& warnings);

}  // namespace slurmtwin
