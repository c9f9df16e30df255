// The files a real site's admins have (`sacctmgr dump`, `sacctmgr -P show qos`, `scontrol show
// config|nodes|partition`) read into the same site as the slurm.conf + sacctmgr commands they came from.
// The hand-written texts follow the formats of Slurm 22.05 (src/sacctmgr/file_functions.c,
// src/api/config_info.c); tests/oracle/recorded/17_site_files holds files real Slurm printed.
#include <doctest/doctest.h>
#include <fmt/format.h>
#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include "tests/test_support.hpp"
#include "traces/read_report.hpp"
#include "traces/sacctmgr.hpp"
#include "traces/scontrol_show.hpp"
#include "traces/site.hpp"
#include "traces/site_import.hpp"
#include "traces/site_yaml.hpp"
#include "traces/slurm_conf.hpp"
#include "traces/text.hpp"

using namespace slurmtwin;

namespace {

using testing::input_error;

std::size_t count_containing(const std::vector<std::string>& warnings, const std::string& needle) {
  return static_cast<std::size_t>(std::count_if(warnings.begin(), warnings.end(), [&](const std::string& w) {
    return w.find(needle) != std::string::npos;
  }));
}

/// Associations in a fixed order with their QOS lists sorted, so that two imports compare whatever
/// order their files used (the order means nothing to Slurm).
std::vector<UserAssoc> sorted_assocs(std::vector<UserAssoc> v) {
  std::sort(v.begin(), v.end(), [](const UserAssoc& a, const UserAssoc& b) {
    return std::tie(a.user, a.account, a.partition) < std::tie(b.user, b.account, b.partition);
  });
  for (auto& a : v) std::sort(a.qos.begin(), a.qos.end());
  return v;
}
std::vector<Account> sorted_accounts(std::vector<Account> v) {
  std::sort(v.begin(), v.end(), [](const Account& a, const Account& b) { return a.name < b.name; });
  for (auto& a : v) std::sort(a.qos.begin(), a.qos.end());
  return v;
}
std::vector<User> sorted_users(std::vector<User> v) {
  std::sort(v.begin(), v.end(), [](const User& a, const User& b) { return a.name < b.name; });
  return v;
}

const char* const kQosScript =
    "add qos low Priority=10\n"
    "add qos high Priority=100 Preempt=low PreemptMode=requeue GraceTime=300 Flags=DenyOnLimit UsageFactor=2 "
    "GrpTRES=cpu=16 MaxTRESPerJob=cpu=8 MaxWall=01:00:00 MaxTRESPerUser=cpu=12 MaxJobsPerUser=2 "
    "MaxSubmitJobsPerUser=5 MaxTRESPerAccount=cpu=4\n";

// `sacctmgr -P show qos` of the same QOS, 22.05's default columns (Preempt names a later row).
const char* const kQosTable =
    "Name|Priority|GraceTime|Preempt|PreemptExemptTime|PreemptMode|Flags|UsageThres|UsageFactor|GrpTRES|"
    "GrpTRESMins|GrpTRESRunMins|GrpJobs|GrpSubmit|GrpWall|MaxTRES|MaxTRESPerNode|MaxTRESMins|MaxWall|"
    "MaxTRESPU|MaxJobsPU|MaxSubmitPU|MaxTRESPA|MaxJobsPA|MaxSubmitPA|MinTRES\n"
    "normal|0|00:00:00|||cluster|||1.000000|||||||||||||||||\n"
    "high|100|00:05:00|low||requeue|DenyOnLimit||2.000000|cpu=16||||||cpu=8|||01:00:00|cpu=12|2|5|cpu=4|||\n"
    "low|10|00:00:00|||cluster|||1.000000|||||||||||||||||\n";

/// What an admin of a recorded run's cluster can give instead of its slurm.conf and sacctmgr commands
/// (made by real Slurm, in the run's admin/): scontrol show config/nodes/partition, sacctmgr show qos
/// and sacctmgr dump.
SiteFiles admin_files(const std::filesystem::path& run) {
  const auto admin = [&](const char* name) { return (run / "admin" / name).string(); };
  SiteFiles f;
  f.cluster.scontrol_config = admin("scontrol-show-config.txt");
  f.cluster.scontrol_nodes = admin("scontrol-show-nodes.txt");
  f.cluster.scontrol_partitions = admin("scontrol-show-partition.txt");
  f.qos_table = admin("sacctmgr-show-qos.txt");
  f.sacctmgr_dump = admin("sacctmgr-dump.cfg");
  return f;
}

}  // namespace

TEST_CASE("sacctmgr show qos -P gives the QOS its sacctmgr commands made") {
  Site from_script, from_table;
  std::vector<std::string> w1, w2;
  import_sacctmgr_script_text(kQosScript, "qos.script", from_script, w1);
  import_qos_table_text(kQosTable, "qos.txt", from_table, w2);
  REQUIRE(from_table.qos.size() == 3);
  const auto by_name = [](std::vector<Qos> v) {
    std::sort(v.begin(), v.end(), [](const Qos& a, const Qos& b) { return a.name < b.name; });
    return v;
  };
  CHECK(by_name(from_table.qos) == by_name(from_script.qos));
  const auto& high = *from_table.find_qos("high");
  CHECK(high.grace_time == 300);  // printed 00:05:00, set in seconds
  CHECK(high.preempt == std::vector<std::string>{"low"});
  CHECK(high.limits.max_wall == 3600);
  CHECK(from_table.find_qos("normal")->preempt_mode == PreemptMode::kUnset);  // "cluster"
  CHECK(high.limits.max_tres_per_account == TresMap{{"cpu", 4}});             // the MaxTRESPA column

  CHECK(input_error([] {
          Site s;
          std::vector<std::string> w;
          import_qos_table_text("Name|Preempt\nhigh|lo\n", "q.txt", s, w);
        }) == "q.txt:2: Preempt: unknown QOS 'lo'");
  CHECK(input_error([] {
          Site s;
          std::vector<std::string> w;
          import_qos_table_text("Name|Flags\nhigh|DenyOnLimt\n", "q.txt", s, w);
        }) == "q.txt:2: Flags: unknown QOS flag 'DenyOnLimt'");
  CHECK(input_error([] {
          Site s;
          std::vector<std::string> w;
          import_qos_table_text("Priority|Flags\n1|\n", "q.txt", s, w);
        }) == "q.txt:1: Name: the header lacks a Name column");
}

TEST_CASE("a sacctmgr dump file gives the account tree its sacctmgr commands made") {
  // What `sacctmgr dump c file=F` writes for the tree the script below builds (22.05's
  // print_file_add_limits_to_line: MaxWallDurationPerJob in minutes, QOS lists quoted).
  const std::string dump =
      "# To edit this file start with a cluster line for the new cluster\n"
      "# Cluster - 'cluster_name':MaxTRESPerJob=node=50\n"
      "Cluster - 'c':Fairshare=1:QOS='normal'\n"
      "Parent - 'root'\n"
      "User - 'root':DefaultAccount='root':AdminLevel='Administrator':Fairshare=1\n"
      "Account - 'dept':Description='dept: physics':Organization='dept':Fairshare=10:GrpJobs=4\n"
      "Account - 'other':Description='other':Organization='other':Fairshare=1\n"
      "Parent - 'dept'\n"
      "Account - 'grp':Description='grp':Organization='grp':Fairshare=5:GrpTRES=cpu=16:QOS='high,normal'\n"
      "Parent - 'grp'\n"
      "User - 'ann':DefaultAccount='other':Fairshare=2:MaxJobs=1:MaxWallDurationPerJob=30\n"
      "User - 'bob':DefaultAccount='grp':DefaultQOS='high':Fairshare=parent:QOS='high'\n"
      "Parent - 'other'\n"
      "User - 'ann':DefaultAccount='other':Fairshare=1\n"
      "User - "
      "'cy':Partition='batch':DefaultAccount='other':Coordinator='other':Fairshare=3:MaxSubmitJobs=2\n";
  const std::string script =
      "add cluster c\n"
      "modify user root set AdminLevel=Administrator\n"
      "add account dept Fairshare=10 GrpJobs=4\n"
      "add account other Fairshare=1\n"
      "add account grp Parent=dept Fairshare=5 GrpTRES=cpu=16 QOS=high,normal\n"
      "add user ann Account=other Fairshare=1\n"
      "add user ann Account=grp Fairshare=2 MaxJobs=1 MaxWall=30\n"
      "add user bob Account=grp DefaultQOS=high Fairshare=parent QOS=high\n"
      "add user cy Account=other Partition=batch Fairshare=3 MaxSubmitJobs=2\n";
  Site from_script, from_dump;
  std::vector<std::string> w1, w2;
  import_qos_table_text(kQosTable, "qos.txt", from_script, w1);
  import_qos_table_text(kQosTable, "qos.txt", from_dump, w2);
  import_sacctmgr_script_text(script, "accounts.script", from_script, w1);
  import_sacctmgr_dump_text(dump, "c.cfg", from_dump, w2);
  CHECK(from_dump.cluster_name == "c");
  CHECK(sorted_accounts(from_dump.accounts) == sorted_accounts(from_script.accounts));
  CHECK(sorted_assocs(from_dump.associations) == sorted_assocs(from_script.associations));
  CHECK(sorted_users(from_dump.users) == sorted_users(from_script.users));
  CHECK(from_dump.find_user("ann")->default_account == "other");
  CHECK(from_dump.find_account("grp")->parent == "dept");
  CHECK(count_containing(w2, "Coordinator") == 0);  // who administers an account is not scheduling
  CHECK_NOTHROW(validate(from_dump));

  const auto import = [](const std::string& text) {
    return input_error([&] {
      Site s;
      std::vector<std::string> w;
      import_qos_table_text("Name\nnormal\n", "qos.txt", s, w);
      import_sacctmgr_dump_text(text, "d.cfg", s, w);
    });
  };
  // QOS are not in a dump: one it names must come from `sacctmgr show qos -P`
  CHECK(import("Cluster - 'c':QOS='normal'\nParent - 'root'\nAccount - 'a':QOS='gold'\n") ==
        "d.cfg:3: QOS: unknown QOS 'gold' (a sacctmgr dump names QOS without defining them: give them with "
        "--qos-dump, the output of `sacctmgr -P show qos`)");
  CHECK(import("add account a\n") ==
        "d.cfg:1: : expected \"Cluster|Parent|Account|User - 'name'\", not 'add account a'");
  CHECK(import("Parent - 'root'\n") == "d.cfg:1: parent: before the Cluster line");
  CHECK(import("Cluster - 'c'\nParent - 'nope'\n") == "d.cfg:2: Parent: account 'nope' is not defined above");
  CHECK(import("Cluster - 'c'\nParent - 'root'\nAccount - 'a':Fairshare=x\n") ==
        "d.cfg:3: Fairshare: 'x' is not a share count or 'parent'");
  CHECK(import("Cluster - 'c'\nParent - 'root'\nUser - 'u':DefaultAccount='zz'\n") ==
        "d.cfg:3: DefaultAccount: user 'u' has no association with its default account 'zz'");
  CHECK(import("# nothing\n") ==
        "d.cfg: Cluster: no \"Cluster - 'name'\" line: not a `sacctmgr dump` file (a script of sacctmgr "
        "commands goes to --sacctmgr)");
  CHECK(import("Cluster - 'c'\nCluster - 'd'\n") ==
        "d.cfg:2: Cluster: a second Cluster line: give one cluster's dump");
}

TEST_CASE("scontrol show config, nodes and partition give the cluster their slurm.conf describes") {
  const auto dir = testing::scratch_dir("scontrol_show");
  const auto write = [&](const char* name, const std::string& content) {
    const auto p = (dir / name).string();
    std::ofstream(p) << content;
    return p;
  };
  const auto conf = write("slurm.conf",
                          "ClusterName=c\n"
                          "SchedulerType=sched/backfill\n"
                          "SchedulerParameters=bf_interval=1,bf_window=60,bf_continue\n"
                          "PriorityType=priority/multifactor\n"
                          "PriorityCalcPeriod=1\n"
                          "PriorityDecayHalfLife=00:10:00\n"
                          "PriorityWeightAge=1000\n"
                          "PriorityWeightFairshare=5000\n"
                          "OverTimeLimit=2\n"
                          "PreemptType=preempt/qos\n"
                          "PreemptMode=REQUEUE\n"
                          "NodeName=n[1-2] CPUs=4 RealMemory=8000 Weight=2 Features=fast\n"
                          "NodeName=g1 CPUs=8 RealMemory=16000 Gres=gpu:2 Weight=5\n"
                          "PartitionName=batch Nodes=n[1-2] Default=YES MaxTime=10 PriorityTier=2 State=UP\n"
                          "PartitionName=gpu Nodes=g1 MaxTime=60 AllowQos=normal,high State=UP\n");
  // What scontrol prints for it (22.05 layout: "%-23s = %s", multi-line records; abridged).
  const auto config = write("config.txt",
                            "Configuration data as of 2026-11-25T10:00:00\n"
                            "AccountingStorageEnforce = none\n"
                            "BOOT_TIME               = 2026-11-25T09:59:00\n"
                            "ClusterName             = c\n"
                            "KillWait                = 30 sec\n"
                            "OverTimeLimit           = 2 min\n"
                            "PreemptMode             = REQUEUE\n"
                            "PreemptType             = preempt/qos\n"
                            "PreemptExemptTime       = 00:00:00\n"
                            "PriorityParameters      = (null)\n"
                            "PriorityDecayHalfLife   = 00:10:00\n"
                            "PriorityCalcPeriod      = 00:01:00\n"
                            "PriorityFavorSmall      = No\n"
                            "PriorityFlags           = \n"
                            "PriorityMaxAge          = 7-00:00:00\n"
                            "PriorityUsageResetPeriod = NONE\n"
                            "PriorityType            = priority/multifactor\n"
                            "PriorityWeightAge       = 1000\n"
                            "PriorityWeightFairShare = 5000\n"
                            "PriorityWeightTRES      = (null)\n"
                            "SchedulerParameters     = bf_interval=1,bf_window=60,bf_continue\n"
                            "SchedulerType           = sched/backfill\n"
                            "SLURM_VERSION           = 22.05.8\n"
                            "\n"
                            "Cgroup Support Configuration:\n"
                            "AllowedDevicesFile      = /etc/slurm/cgroup_allowed_devices_file.conf\n"
                            "\n"
                            "Slurmctld(primary) at ctl is UP\n");
  const auto nodes =
      write("nodes.txt",
            "NodeName=n1 Arch=x86_64 CoresPerSocket=1 \n"
            "   CPUAlloc=0 CPUEfctv=4 CPUTot=4 CPULoad=0.00\n"
            "   AvailableFeatures=fast\n"
            "   Gres=(null)\n"
            "   RealMemory=8000 AllocMem=0 FreeMem=1000 Sockets=4 Boards=1\n"
            "   State=IDLE ThreadsPerCore=1 TmpDisk=0 Weight=2 Owner=N/A MCS_label=N/A\n"
            "\n"
            "NodeName=n2 Arch=x86_64 CoresPerSocket=1 CPUAlloc=0 CPUEfctv=4 CPUTot=4 "
            "AvailableFeatures=fast Gres=(null) RealMemory=8000 Sockets=4 Boards=1 State=MIXED "
            "ThreadsPerCore=1 Weight=2\n"
            "\n"
            "NodeName=g1 Arch=x86_64 CoresPerSocket=1 \n"
            "   CPUAlloc=0 CPUEfctv=8 CPUTot=8 CPULoad=0.00\n"
            "   AvailableFeatures=(null)\n"
            "   ActiveFeatures=(null)\n"
            "   Gres=gpu:2\n"
            "   NodeAddr=10.0.0.3 NodeHostName=g1 Version=22.05.8\n"
            "   OS=Linux 6.1.0-18-amd64 #1 SMP PREEMPT_DYNAMIC Debian 6.1.76-1 (2024-02-01) \n"
            "   RealMemory=16000 AllocMem=0 FreeMem=1000 Sockets=8 Boards=1\n"
            "   State=DOWN+DRAIN ThreadsPerCore=1 TmpDisk=0 Weight=5 Owner=N/A MCS_label=N/A\n"
            "   Partitions=gpu \n"
            "   Reason=Not responding [slurm@2026-11-25T09:00:00]\n");
  const auto partitions =
      write("partitions.txt",
            "PartitionName=batch\n"
            "   AllowGroups=ALL AllowAccounts=ALL AllowQos=ALL\n"
            "   AllocNodes=ALL Default=YES QoS=N/A\n"
            "   DefaultTime=NONE DisableRootJobs=NO ExclusiveUser=NO GraceTime=0 Hidden=NO\n"
            "   MaxNodes=UNLIMITED MaxTime=00:10:00 MinNodes=0 LLN=NO MaxCPUsPerNode=UNLIMITED\n"
            "   Nodes=n[1-2]\n"
            "   PriorityJobFactor=1 PriorityTier=2 RootOnly=NO ReqResv=NO OverSubscribe=NO\n"
            "   OverTimeLimit=NONE PreemptMode=REQUEUE\n"
            "   State=UP TotalCPUs=8 TotalNodes=2 SelectTypeParameters=NONE\n"
            "   JobDefaults=(null)\n"
            "   DefMemPerNode=UNLIMITED MaxMemPerNode=UNLIMITED\n"
            "   TRES=cpu=8,mem=16000M,node=2,billing=8\n"
            "\n"
            "PartitionName=gpu\n"
            "   AllowGroups=ALL AllowAccounts=ALL AllowQos=normal,high\n"
            "   AllocNodes=ALL Default=NO QoS=N/A\n"
            "   DefaultTime=NONE DisableRootJobs=NO ExclusiveUser=NO GraceTime=0 Hidden=NO\n"
            "   MaxNodes=UNLIMITED MaxTime=01:00:00 MinNodes=0 LLN=NO MaxCPUsPerNode=UNLIMITED\n"
            "   Nodes=g1\n"
            "   PriorityJobFactor=1 PriorityTier=1 RootOnly=NO ReqResv=NO OverSubscribe=NO\n"
            "   OverTimeLimit=NONE PreemptMode=REQUEUE\n"
            "   State=UP TotalCPUs=8 TotalNodes=1 SelectTypeParameters=NONE\n");
  std::vector<std::string> w1, w2;
  SlurmConfigFiles from_conf, from_scontrol;
  from_conf.slurm_conf = conf;
  from_scontrol.scontrol_config = config;
  from_scontrol.scontrol_nodes = nodes;
  from_scontrol.scontrol_partitions = partitions;
  const Site a = import_slurm_config(from_conf, w1);
  std::vector<SettingSource> sources;
  const Site b = import_slurm_config(from_scontrol, w2, false, &sources);
  CHECK(b.scheduler == a.scheduler);
  CHECK(b.partitions == a.partitions);
  REQUIRE(b.nodes.size() == a.nodes.size());
  CHECK(b.nodes == a.nodes);
  CHECK(b.cluster_name == "c");
  // the drained node is said, not silently kept or dropped
  CHECK(count_containing(w2, "nodes.txt:18: node g1 was DOWN+DRAIN when this was taken") == 1);
  // where each setting came from, and what no file set
  const auto where = [&](const std::string& setting) {
    for (const auto& s : sources)
      if (s.setting == setting) return s.where;
    return std::string("absent");
  };
  CHECK(where("PriorityWeightAge") == config + ":18");
  CHECK(where("PartitionName") == partitions + ":1");
  CHECK(where("PriorityWeightJobSize").empty());  // set in no file: Slurm's default

  // slurm.conf's own settings, then scontrol's winning; scontrol's nodes replacing slurm.conf's
  SlurmConfigFiles both = from_scontrol;
  both.slurm_conf = conf;
  sources.clear();
  const Site c = import_slurm_config(both, w2, false, &sources);
  CHECK(c.nodes == a.nodes);
  CHECK(where("PriorityWeightAge") == config + ":18");

  CHECK(input_error([&] {
          SlurmConfigFiles f;
          f.scontrol_config = conf;  // slurm.conf given as scontrol output
          std::vector<std::string> w;
          import_slurm_config(f, w);
        }) == conf + ": not `scontrol show config` output (no 'Configuration data as of' line)");
}

TEST_CASE("the real site files of scenario 17 (made by Slurm 22.05) import to the site its commands made") {
  const std::filesystem::path run =
      std::filesystem::path(SLURMTWIN_SOURCE_DIR) / "tests/oracle/recorded/17_site_files/run1";
  REQUIRE(std::filesystem::exists(run / "admin"));
  const auto admin = [&](const char* name) { return (run / "admin" / name).string(); };
  std::vector<std::string> w1, w2, w3;
  // how the oracle harness made the cluster: its slurm.conf and its sacctmgr commands
  const Site made =
      import_site(SiteFiles::conf_and_script(
                      (run / "slurm.conf").string(), (run / "accounts.sacctmgr").string(),
                      std::filesystem::exists(run / "gres.conf") ? (run / "gres.conf").string() : ""),
                  w1);
  // what an admin can give instead: scontrol show + sacctmgr show qos + sacctmgr dump
  const SiteFiles dumped = admin_files(run);
  const Site from_dump = import_site(dumped, w2);
  CHECK(from_dump.scheduler == made.scheduler);
  CHECK(from_dump.nodes == made.nodes);
  CHECK(from_dump.partitions == made.partitions);
  CHECK(from_dump.qos == made.qos);
  CHECK(sorted_accounts(from_dump.accounts) == sorted_accounts(made.accounts));
  CHECK(sorted_assocs(from_dump.associations) == sorted_assocs(made.associations));
  CHECK(sorted_users(from_dump.users) == sorted_users(made.users));
  // ... or the association table with its tree
  SiteFiles table = dumped;
  table.sacctmgr_dump.clear();
  table.assoc_table = admin("sacctmgr-show-assoc-tree.txt");
  const Site from_table = import_site(table, w3);
  // (this table's columns, the harness's `show assoc tree format=...`, leave out bio's GrpTRESMins)
  auto made_accounts = made.accounts;
  for (auto& a : made_accounts) a.limits.grp_tres_mins.clear();
  CHECK(sorted_accounts(from_table.accounts) == sorted_accounts(made_accounts));
  CHECK(sorted_assocs(from_table.associations) == sorted_assocs(made.associations));
  // the table has no default accounts (alice's is theory; the table can only guess): said
  CHECK(count_containing(w3, "6 users added with their first association's account as default account") == 1);
}

TEST_CASE("scenario 26's real scontrol output carries the per-GPU defaults (JobDefaults) into the site") {
  // Real Slurm 22.05 prints slurm.conf's DefCpuPerGPU=2 as `JobDefaults = DefCpuPerGPU=2` in scontrol
  // show config and partition gpu's DefMemPerGPU=6000 as `JobDefaults=DefMemPerGPU=6000` in scontrol
  // show partition (no slurm.conf key of that name: they were dropped before). Imported from those
  // files, the partitions equal those imported from the slurm.conf the harness wrote.
  const std::filesystem::path run =
      std::filesystem::path(SLURMTWIN_SOURCE_DIR) / "tests/oracle/recorded/26_def_per_gpu/run1";
  REQUIRE(std::filesystem::exists(run / "admin"));
  std::vector<std::string> w1, w2;
  const Site made = import_site(
      SiteFiles::conf_and_script((run / "slurm.conf").string(), (run / "accounts.sacctmgr").string(),
                                 (run / "gres.conf").string()),
      w1);
  const Site from_dump = import_site(admin_files(run), w2);
  CHECK(made.partition("gpu").def_mem_per_gpu_mb == 6000);
  CHECK(made.partition("gpu").def_cpu_per_gpu == 2);
  CHECK(made.partition("batch").def_cpu_per_gpu == 2);
  CHECK_FALSE(made.partition("batch").def_mem_per_gpu_mb.has_value());
  CHECK(from_dump.partitions == made.partitions);
}

TEST_CASE("scenarios 28 and 29's real admin files carry the TRES-minute, per-node and partition QOS limits") {
  // sacctmgr show qos prints GrpTRESMins, GrpTRESRunMins, MaxTRESPerNode, MaxTRESMins and MinTRES as
  // columns, sacctmgr dump an account's MaxTRESPerNode (inherited by its users, not repeated), scontrol
  // show partition the partition's QoS: imported from them, the site equals the one the harness's own
  // slurm.conf and sacctmgr commands made, without a word about the accounting files.
  for (const char* scenario : {"28_tres_job_limits", "29_partition_qos"}) {
    CAPTURE(scenario);
    const auto run =
        std::filesystem::path(SLURMTWIN_SOURCE_DIR) / "tests/oracle/recorded" / scenario / "run1";
    REQUIRE(std::filesystem::exists(run / "admin"));
    std::vector<std::string> w1, w2;
    const Site made = import_site(
        SiteFiles::conf_and_script((run / "slurm.conf").string(), (run / "accounts.sacctmgr").string()), w1);
    const Site from_dump = import_site(admin_files(run), w2);
    CHECK(from_dump.qos == made.qos);
    CHECK(from_dump.partitions == made.partitions);
    CHECK(sorted_accounts(from_dump.accounts) == sorted_accounts(made.accounts));
    CHECK(sorted_assocs(from_dump.associations) == sorted_assocs(made.associations));
    // One warning about the accounting files: sacctmgr's default QOS columns lack the accrue limits
    // and MaxTRESRunMinsPU/PA, so a limit there would not be seen.
    CHECK(count_containing(w2, "sacctmgr-") == 1);
    CHECK(count_containing(w2,
                           "sacctmgr-show-qos.txt:1: no column GrpJobsAccrue, MaxJobsAccruePU, "
                           "MaxJobsAccruePA, MaxTRESRunMinsPU, MaxTRESRunMinsPA") == 1);
  }
  std::vector<std::string> w;
  const auto run =
      std::filesystem::path(SLURMTWIN_SOURCE_DIR) / "tests/oracle/recorded/28_tres_job_limits/run1";
  const Site s = import_site(admin_files(run), w);
  CHECK(s.qos_named("gmins").limits.grp_tres_mins == TresMap{{"cpu", 7}});
  CHECK(s.qos_named("mins").limits.max_tres_mins_per_job == TresMap{{"cpu", 20}});
  CHECK(s.qos_named("minq").limits.min_tres_per_job == TresMap{{"cpu", 4}});
  CHECK(s.find_account("pn")->limits.max_tres_per_node == TresMap{{"cpu", 2}});
}

TEST_CASE("end to end: scenario 17's admin files and its sacct dump replay to within real Slurm's spread") {
  // Issue 23, item 6: what an admin of the real cluster has (scontrol show, sacctmgr show qos and
  // dump, sacct -P as documented), imported with one call and replayed with the default timer phases:
  // the twin's starts are within the real runs' spread (0 s between the two real runs) + 5 s.
  const auto admin =
      std::filesystem::path(SLURMTWIN_SOURCE_DIR) / "tests/oracle/recorded/17_site_files/run1/admin";
  const auto scratch = testing::scratch_dir("e2e17");
  const auto run = testing::run_cli(fmt::format("replay {} --trace {}/sacct.txt --timezone UTC --out {}",
                                                testing::admin_site_options(admin), admin.string(),
                                                (scratch / "run").string()));
  REQUIRE(run.code == 0);
  // every job accounted for: 23 ran, j009 was cancelled while pending, as recorded
  CHECK(run.out.find(
            "jobs: 23 started, 0 never started, 0 rejected at submit, 1 cancelled before they started") !=
        std::string::npos);
  const auto at = run.out.find("fidelity vs recorded starts: |start error| mean ");
  REQUIRE(at != std::string::npos);
  const double mean =
      std::stod(run.out.substr(at + std::string("fidelity vs recorded starts: |start error| mean ").size()));
  CHECK(mean <= 5.0);
  // the report shows it: recorded vs simulated waits, per partition, QOS and week
  const auto out = scratch / "run";
  const auto report =
      testing::run_cli(fmt::format("report {} -o {}", out.string(), (out / "r.html").string()));
  REQUIRE(report.code == 0);
  const auto html = testing::slurp(out / "r.html");
  CHECK(html.find("Against history: the twin vs what happened") != std::string::npos);
  CHECK(html.find("history-wait-cdf") != std::string::npos);
  CHECK(html.find("<th class=\"l\">week from</th>") != std::string::npos);
}

TEST_CASE("the Slurm version decides the defaults that changed: classic fair share before 19.05") {
  // Fair Tree became the default in Slurm 19.05 (PriorityFlags=FAIR_TREE before it, NO_FAIR_TREE
  // after): an old site's slurm.conf without the flag ran classic fair share, and must replay so.
  const auto dir = testing::scratch_dir("slurm_version");
  const auto conf = (dir / "slurm.conf").string();
  const auto write = [&](const std::string& extra) {
    std::ofstream(conf)
        << "ClusterName=c\nNodeName=n1 CPUs=4 RealMemory=1000\nPartitionName=p Nodes=n1 Default=YES\n"
        << extra;
  };
  const auto flags = [&](const std::string& version) {
    SlurmConfigFiles f;
    f.slurm_conf = conf;
    f.slurm_version = version;
    std::vector<std::string> w;
    return import_slurm_config(f, w).scheduler.priority_flags;
  };
  write("");
  CHECK(flags("") == std::set<std::string>{"FAIR_TREE"});  // the version the simulator follows: 22.05
  CHECK(flags("22.05") == std::set<std::string>{"FAIR_TREE"});
  CHECK(flags("18.08").empty());
  write("PriorityFlags=FAIR_TREE,SMALL_RELATIVE_TO_TIME\n");
  CHECK(flags("18.08") == std::set<std::string>{"FAIR_TREE", "SMALL_RELATIVE_TO_TIME"});
  write("PriorityFlags=SMALL_RELATIVE_TO_TIME\n");
  CHECK(flags("17.11") == std::set<std::string>{"SMALL_RELATIVE_TO_TIME"});
  CHECK(flags("20.11") == std::set<std::string>{"FAIR_TREE", "SMALL_RELATIVE_TO_TIME"});
  CHECK(parse_slurm_version("22.05.8") == 2205);
  CHECK_THROWS_WITH_AS(parse_slurm_version("22"),
                       "'22' is not a Slurm version (major.minor[.micro], e.g. 22.05)",
                       std::invalid_argument);
  // scontrol show config says which version it came from
  const auto admin =
      std::filesystem::path(SLURMTWIN_SOURCE_DIR) / "tests/oracle/recorded/17_site_files/run1/admin";
  SlurmConfigFiles f;
  f.scontrol_config = (admin / "scontrol-show-config.txt").string();
  std::vector<std::string> w;
  std::vector<SettingSource> sources;
  import_slurm_config(f, w, false, &sources);
  const auto it = std::find_if(sources.begin(), sources.end(),
                               [](const SettingSource& s) { return s.setting == "SlurmVersion"; });
  REQUIRE(it != sources.end());
  CHECK(it->value == "22.05.8");
  const auto bad = testing::run_cli(
      fmt::format("config import --slurm-conf {} --slurm-version 22 -o {}", conf, (dir / "s.yaml").string()));
  CHECK(bad.code == 2);
  CHECK(bad.out.find("--slurm-version: '22' is not a Slurm version") != std::string::npos);
}

TEST_CASE("end to end: scenario 18's reservations and node events replay to within real Slurm's spread") {
  // Real Slurm 22.05 (tests/oracle 18_outages_reservations): a MAINT reservation, a user reservation, a
  // node DOWN then drained under a job. What its admin has: the accounting's reservations (with ids:
  // j006 and j007 started in u3res's first second, so sacct gives their ReservationId but no name),
  // its node events and a sacct dump (all printed with TZ=UTC by the harness).
  const auto admin = std::filesystem::path(SLURMTWIN_SOURCE_DIR) /
                     "tests/oracle/recorded/18_outages_reservations/run1/admin";
  const auto scratch = testing::scratch_dir("e2e18");
  const auto site = fmt::format("{} --trace {}/sacct.txt --timezone UTC", testing::admin_site_options(admin),
                                admin.string());
  const auto replay = [&](const std::string& extra, const char* out) {
    return testing::run_cli(fmt::format("replay {} {} --out {}", site, extra, (scratch / out).string()));
  };
  const auto resv = fmt::format("--reservations {}/sacctmgr-show-reservation.txt", admin.string());
  const auto events = fmt::format("--node-events {}/sacctmgr-show-event.txt", admin.string());
  const auto run = replay(resv + " " + events, "run");
  REQUIRE(run.code == 0);
  // 25 jobs submitted; j010 (access denied to u3res) was refused by sbatch and has no record
  CHECK(run.out.find("jobs: 24 started, 0 never started, 0 rejected at submit") != std::string::npos);
  CHECK(run.out.find("fidelity vs recorded starts: |start error| mean 0 s, p90 1 s") != std::string::npos);
  // Job 4 fits only on n3, which was DOWN until T+30: it starts then, as recorded (jobs.csv: start is
  // column 8, recorded_start the last).
  const auto job4 = [&](const char* out) {
    const auto csv = testing::slurp(scratch / out / "jobs.csv");
    const auto at = csv.find("\n4,") + 1;
    const auto f = text::split(std::string_view(csv).substr(at, csv.find('\n', at) - at), ',');
    return std::pair{std::string(f[7]), std::string(f.back())};
  };
  CHECK(job4("run").first == job4("run").second);
  // Without the node events the twin starts it elsewhere in time.
  REQUIRE(replay(resv, "no_events").code == 0);
  CHECK(job4("no_events").first != job4("no_events").second);
  // Without the reservations the jobs that asked for one are refused (an unknown reservation): fail closed.
  const auto bare = replay("", "bare");
  CHECK(bare.code == 2);
  CHECK(bare.out.find("unknown reservation (give the site's reservations)") != std::string::npos);
}

TEST_CASE("an Include of a named pipe is refused, not waited on for ever") {
  // Issue 27, D8: opening a FIFO blocks until something writes to it.
  const auto dir = testing::scratch_dir("fifo_include");
  const auto fifo = (dir / "nodes.conf").string();
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  const auto conf = (dir / "slurm.conf").string();
  std::ofstream(conf) << "ClusterName=c\nInclude " << fifo << "\nPartitionName=p Nodes=ALL\n";
  std::vector<std::string> warnings;
  CHECK_THROWS_WITH_AS(
      import_slurm_conf(conf, warnings),
      (conf + ":2: Include: " + fifo + ": is not a regular file (a pipe, device or socket)").c_str(),
      InputError);
}

TEST_CASE("scenario 31's real admin files carry the accrue limits, with every QOS column asked for") {
  // sacctmgr dump writes an account's GrpJobsAccrue=2 and a user's MaxJobsAccrue=1; `sacctmgr show
  // qos` prints a QOS's MaxJobsAccruePU and GrpJobsAccrue only when format= names them (the default
  // columns leave them out, so that table loses them: said once, with the format to use); `show assoc`
  // prints GrpJobsAccrue/MaxJobsAccrue when asked. Imported from the formatted files, the site equals
  // the one the harness's slurm.conf and sacctmgr commands made.
  const auto run =
      std::filesystem::path(SLURMTWIN_SOURCE_DIR) / "tests/oracle/recorded/31_accrue_limits/run1";
  REQUIRE(std::filesystem::exists(run / "admin"));
  std::vector<std::string> w1, w2, w3, w4;
  const Site made = import_site(
      SiteFiles::conf_and_script((run / "slurm.conf").string(), (run / "accounts.sacctmgr").string()), w1);
  CHECK(made.qos_named("acc").limits.max_jobs_accrue_per_user == 2);
  CHECK(made.qos_named("gacc").limits.grp_jobs_accrue == 1);
  auto files = admin_files(run);
  files.qos_table = (run / "admin" / "sacctmgr-show-qos-format.txt").string();
  const Site formatted = import_site(files, w2);
  CHECK(formatted.qos == made.qos);
  CHECK(sorted_accounts(formatted.accounts) == sorted_accounts(made.accounts));
  CHECK(sorted_assocs(formatted.associations) == sorted_assocs(made.associations));
  CHECK(count_containing(w2, "sacctmgr-") == 0);
  CHECK(formatted.find_account("ga")->limits.grp_jobs_accrue == 2);
  const auto u4 = std::find_if(formatted.associations.begin(), formatted.associations.end(),
                               [](const UserAssoc& a) { return a.user == "u4"; });
  REQUIRE(u4 != formatted.associations.end());
  CHECK(u4->limits.max_jobs_accrue_per_user == 1);
  // The association table with the two columns gives the same tree limits.
  files.sacctmgr_dump.clear();
  files.assoc_table = (run / "admin" / "sacctmgr-show-assoc-tree.txt").string();
  const Site from_table = import_site(files, w3);
  CHECK(sorted_accounts(from_table.accounts) == sorted_accounts(made.accounts));
  CHECK(sorted_assocs(from_table.associations) == sorted_assocs(made.associations));
  CHECK(count_containing(w3, "no column GrpJobsAccrue") == 0);
  // sacctmgr's default QOS columns: the QOS limits are lost, and the import says so.
  const Site plain = import_site(admin_files(run), w4);
  CHECK(!plain.qos_named("acc").limits.max_jobs_accrue_per_user);
  CHECK(count_containing(w4, "sacctmgr-show-qos.txt:1: no column GrpJobsAccrue") == 1);
}

TEST_CASE("the QOS export format the import warns with is the one the docs and the oracle harness use") {
  // One format (kQosTableFormat): a copy that drifted would have admins export a table that loses limits.
  const auto root = std::filesystem::path(SLURMTWIN_SOURCE_DIR);
  for (const char* file : {"README.md", "docs/src/getting-started.md", "tests/oracle/oracle.sh"}) {
    CAPTURE(file);
    std::ifstream in(root / file);
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    CHECK(text.find(kQosTableFormat) != std::string::npos);
  }
}

TEST_CASE("limits in the accounting files that AccountingStorageEnforce leaves unenforced are named") {
  // Scenario 32's real files: AccountingStorageEnforce=associations, limits on QOS capped, account ga
  // and user us. Slurm stores them and checks none; the import says so once, naming where they are.
  const auto run =
      std::filesystem::path(SLURMTWIN_SOURCE_DIR) / "tests/oracle/recorded/32_limits_not_enforced/run1";
  REQUIRE(std::filesystem::exists(run / "admin"));
  std::vector<std::string> w;
  auto files = admin_files(run);
  files.qos_table = (run / "admin" / "sacctmgr-show-qos-format.txt").string();
  const Site s = import_site(files, w);
  CHECK(s.scheduler.accounting_storage_enforce == std::set<std::string>{"associations"});
  CHECK(s.qos_named("capped").limits.max_jobs_per_user == 1);
  CHECK(count_containing(w,
                         "limits are set (QOS capped, account ga, 1 user association(s)) but "
                         "AccountingStorageEnforce lacks 'limits'") == 1);
  // Enforced (the harness's usual configuration): no such warning.
  std::vector<std::string> w2;
  import_site(admin_files(std::filesystem::path(SLURMTWIN_SOURCE_DIR) /
                          "tests/oracle/recorded/31_accrue_limits/run1"),
              w2);
  CHECK(count_containing(w2, "AccountingStorageEnforce lacks") == 0);
}

TEST_CASE("scenario 33's real QOS table carries the per-account limits") {
  // `sacctmgr show qos` prints MaxTRESPA, MaxJobsPA and MaxSubmitPA among its default columns: read,
  // the QOS equal those the sacctmgr commands made, with nothing said about them.
  const auto run =
      std::filesystem::path(SLURMTWIN_SOURCE_DIR) / "tests/oracle/recorded/33_qos_per_account/run1";
  REQUIRE(std::filesystem::exists(run / "admin"));
  std::vector<std::string> w1, w2;
  const Site made = import_site(
      SiteFiles::conf_and_script((run / "slurm.conf").string(), (run / "accounts.sacctmgr").string()), w1);
  const auto& pa = made.qos_named("pa").limits;
  CHECK(pa.max_jobs_per_account == 2);
  CHECK(pa.max_submit_jobs_per_account == 4);
  CHECK(pa.max_tres_per_account == TresMap{{"cpu", 12}});
  auto files = admin_files(run);
  files.qos_table = (run / "admin" / "sacctmgr-show-qos-format.txt").string();
  const Site formatted = import_site(files, w2);
  CHECK(formatted.qos == made.qos);
  CHECK(count_containing(w2, "sacctmgr-") == 0);
}
