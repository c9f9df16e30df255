#include <doctest/doctest.h>

#include <algorithm>
#include <fstream>
#include <string>
#include <vector>

#include "tests/test_support.hpp"
#include "traces/node_order.hpp"
#include "traces/read_report.hpp"
#include "traces/sacctmgr.hpp"
#include "traces/site.hpp"
#include "traces/site_settings.hpp"
#include "traces/site_yaml.hpp"
#include "traces/slurm_conf.hpp"

using namespace slurmtwin;

namespace {

std::size_t count_containing(const std::vector<std::string>& warnings, const std::string& needle) {
  return static_cast<std::size_t>(std::count_if(warnings.begin(), warnings.end(), [&](const std::string& w) {
    return w.find(needle) != std::string::npos;
  }));
}

const UserAssoc* find_assoc(const Site& s, const std::string& user, const std::string& account) {
  for (const auto& a : s.associations)
    if (a.user == user && a.account == account) return &a;
  return nullptr;
}

std::size_t assoc_count(const Site& s, const std::string& user) {
  return static_cast<std::size_t>(std::count_if(s.associations.begin(), s.associations.end(),
                                                [&](const UserAssoc& a) { return a.user == user; }));
}

void write(const std::filesystem::path& p, const std::string& content) {
  std::ofstream(p) << content;
}

using testing::input_error;

/// ub_medium imported from slurm.conf + gres.conf + sacctmgr.script ("" path when the data is absent).
bool import_ub_medium(Site& site, std::vector<std::string>& warnings) {
  const auto conf = testing::data_file("ub_medium/slurm.conf");
  const auto script = testing::data_file("ub_medium/sacctmgr.script");
  if (conf.empty() || script.empty()) return false;
  site = import_slurm_conf(conf, warnings);
  import_sacctmgr_script(script, site, warnings);
  return true;
}

}  // namespace

// ----------------------------------------------------------------------------------------------------
// slurm.conf

TEST_CASE("ub_medium slurm.conf imports nodes, partitions and priority settings as Slurm reads them") {
  const auto path = testing::data_file("ub_medium/slurm.conf");
  if (path.empty()) return;
  std::vector<std::string> warnings;
  const Site s = import_slurm_conf(path, warnings);  // gres.conf beside it is applied too

  CHECK(s.cluster_name == "ubhpc");
  REQUIRE(s.nodes.size() == 217);  // 87 n + 2 gn + 8 g + 96 m + 24 b
  const auto& n001 = *s.find_node("n001");
  CHECK(n001.cpus == 32);  // Sockets=2 x CoresPerSocket=16, no CPUs= on the DEFAULT line
  CHECK(n001.real_memory_mb == 187000);
  CHECK(n001.weight == 60);
  CHECK(n001.features == std::vector<std::string>{"CPU-Gold-6130", "OPA"});
  CHECK(n001.gres.empty());
  CHECK(s.find_node("n087")->weight == 60);
  const auto& gn2 = *s.find_node("gn002");
  CHECK(gn2.weight == 190);
  CHECK(gn2.cpus == 32);
  REQUIRE(gn2.gres.size() == 1);
  CHECK(gn2.gres[0] == NodeGres{"gpu", "tesla_p100-pcie-16gb", 2});
  const auto& g008 = *s.find_node("g008");
  CHECK(g008.cpus == 40);
  CHECK(g008.weight == 190);
  REQUIRE(g008.gres.size() == 1);
  CHECK(g008.gres[0] == NodeGres{"gpu", "tesla_v100-pcie-32gb", 2});  // gres.conf count, slurm.conf type
  const auto& m096 = *s.find_node("m096");
  CHECK(m096.cpus == 40);
  CHECK(m096.weight == 70);
  CHECK(m096.real_memory_mb == 187000);
  const auto& b024 = *s.find_node("b024");
  CHECK(b024.real_memory_mb == 754000);
  CHECK(b024.weight == 160);
  CHECK(b024.cpus == 40);  // CPUs=40 persists from the second DEFAULT line
  // slurmctld's node table: by name (b, g, gn, m, n), not slurm.conf's order (n, gn, g, m, b)
  CHECK(s.nodes.front().name == "b001");
  CHECK(s.nodes[24].name == "g001");
  CHECK(s.nodes[32].name == "gn001");
  CHECK(s.nodes.back().name == "n087");

  REQUIRE(s.partitions.size() == 2);
  const auto& gc = s.partition("general-compute");
  CHECK(gc.nodes.size() == 215);  // 87 n + 96 m + 24 b + 8 g
  CHECK(gc.nodes.front() == "n001");
  CHECK(gc.nodes[87] == "g001");  // node index order (g is defined before m and b)
  CHECK(gc.is_default);
  CHECK(gc.def_mem_per_cpu_mb == 2800);
  CHECK(gc.priority_job_factor == 100);
  CHECK(gc.priority_tier == 100);
  CHECK(gc.allow_qos ==
        std::vector<std::string>{"general-compute", "supporters", "priority", "priority-supporters"});
  CHECK(gc.qos == "general-compute");
  CHECK(gc.default_time == 24 * 3600);  // from PartitionName=DEFAULT
  CHECK(gc.max_time == 72 * 3600);
  const auto& debug = s.partition("debug");
  CHECK(debug.nodes == std::vector<std::string>{"gn001", "gn002"});
  CHECK(debug.max_time == 3600);
  CHECK(debug.default_time == kUnsetTime);  // DEFAULT's DefaultTime=24h exceeds MaxTime=1h: Slurm drops it
  CHECK(count_containing(warnings, "partition debug: DefaultTime exceeds MaxTime") == 1);
  CHECK_FALSE(debug.is_default);
  CHECK(debug.priority_job_factor == 700);
  CHECK(debug.priority_tier == 700);
  CHECK(s.default_partition() == &gc);

  const auto& sch = s.scheduler;
  CHECK(sch.weight_fairshare == 120000);
  CHECK(sch.weight_age == 70000);
  CHECK(sch.weight_partition == 1000000);
  CHECK(sch.weight_job_size == 200000);
  CHECK(sch.weight_qos == 50000);
  CHECK(sch.weight_assoc == 0);
  CHECK(sch.weight_tres == TresWeights{{"cpu", 0.0}, {"mem", 0.03}, {"gres/gpu", 30000.0}});
  CHECK(sch.priority_flags == std::set<std::string>{"FAIR_TREE", "NO_NORMAL_TRES"});
  CHECK(sch.decay_half_life == 30 * 86400);
  CHECK(sch.max_age == 7 * 86400);
  CHECK_FALSE(sch.favor_small);
  CHECK(sch.fairshare_dampening_factor == 5);
  CHECK(sch.params.bf_max_job_user == 100);
  CHECK(sch.params.bf_window == 4320 * 60);
  CHECK(sch.params.bf_interval == 120);
  CHECK(sch.params.bf_max_job_test == 2500);
  CHECK(sch.params.default_queue_depth == 2500);
  CHECK(sch.params.bf_continue);
  CHECK_FALSE(sch.params.bf_busy_nodes);
  CHECK(sch.params.bf_resolution == 60);  // untouched default
  CHECK(sch.params.other == std::map<std::string, std::string>{{"max_script_size", "1048576"}});
  CHECK(sch.preempt_type == "preempt/partition_prio");
  CHECK(sch.preempt_mode == PreemptMode::kRequeue);
  CHECK(sch.select_type == "select/cons_tres");
  CHECK(sch.select_type_parameters == std::set<std::string>{"CR_Core_Memory", "CR_CORE_DEFAULT_DIST_BLOCK"});
  CHECK(sch.enforce_part_limits == "ANY");  // YES is Slurm's old spelling of ANY
  CHECK(sch.accounting_storage_enforce == std::set<std::string>{"associations", "limits", "qos"});
  CHECK(sch.accounting_storage_tres == std::vector<std::string>{"gres/gpu"});
  CHECK_FALSE(sch.job_requeue);
  CHECK(sch.kill_wait == 30);
  CHECK(sch.min_job_age == 300);
  CHECK(sch.first_job_id == 1);

  // StateSaveLocation (twice) and AuthType change no scheduling decision: no word about them;
  // max_script_size warns as an unmodelled option.
  CHECK(count_containing(warnings, "StateSaveLocation") == 0);
  CHECK(count_containing(warnings, "AuthType") == 0);
  CHECK(count_containing(warnings, "max_script_size") == 1);
  CHECK(count_containing(warnings, "FrontendName lines are not modelled") == 1);
}

TEST_CASE(
    "NodeName=DEFAULT and PartitionName=DEFAULT values persist until another DEFAULT line changes them") {
  const char* conf = R"(
NodeName=DEFAULT CPUs=8 RealMemory=1000 Weight=5 Feature=a
NodeName=x[1-2]
NodeName=DEFAULT RealMemory=2000            # CPUs=8, Weight=5, Feature=a still apply
NodeName=y1 Weight=9
NodeName=DEFAULT Feature=b
NodeName=z1
PartitionName=DEFAULT MaxTime=10 State=DOWN
PartitionName=p1 Nodes=x[1-2]
PartitionName=DEFAULT MaxTime=UNLIMITED
PartitionName=p2 Nodes=y1,z1 State=UP
)";
  std::vector<std::string> w;
  const Site s = import_slurm_conf_text(conf, "defaults.conf", w);
  REQUIRE(s.nodes.size() == 4);
  CHECK(s.find_node("x2")->cpus == 8);
  CHECK(s.find_node("x2")->real_memory_mb == 1000);
  CHECK(s.find_node("y1")->real_memory_mb == 2000);
  CHECK(s.find_node("y1")->cpus == 8);
  CHECK(s.find_node("y1")->weight == 9);
  CHECK(s.find_node("y1")->features == std::vector<std::string>{"a"});
  CHECK(s.find_node("z1")->weight == 5);
  CHECK(s.find_node("z1")->real_memory_mb == 2000);
  CHECK(s.find_node("z1")->features == std::vector<std::string>{"b"});
  CHECK(s.partition("p1").max_time == 600);
  CHECK(s.partition("p1").state == "DOWN");
  CHECK(s.partition("p2").max_time == kUnlimited);
  CHECK(s.partition("p2").state == "UP");
  CHECK(w.empty());
}

TEST_CASE("continuation lines, quoted '#', case-insensitive keys and several keys per line") {
  const char* conf =
      "clustername=Alpha  priorityweightage=10 PRIORITYWEIGHTQOS=20\n"
      "nodename=n[1-3] \\\n"
      "   sockets=2 CoresPerSocket=4 \\\n"
      "   ThreadsPerCore=2 Feature=\"x#1,y\"   # comment\n"
      "\n"
      "PartitionName=p Nodes=n[1-3] Default=yes\n";
  std::vector<std::string> w;
  const Site s = import_slurm_conf_text(conf, "cont.conf", w);
  CHECK(s.cluster_name == "alpha");
  CHECK(s.scheduler.weight_age == 10);
  CHECK(s.scheduler.weight_qos == 20);
  REQUIRE(s.nodes.size() == 3);
  CHECK(s.nodes[2].cpus == 16);  // 2 sockets x 4 cores x 2 threads
  CHECK(s.nodes[0].threads_per_core == 2);
  CHECK(s.nodes[0].features == std::vector<std::string>{"x#1", "y"});
  CHECK(s.partition("p").is_default);

  // a bad value on a continued line is reported at the line where the logical line starts
  const auto msg = input_error([] {
    std::vector<std::string> w2;
    import_slurm_conf_text("\nNodeName=a \\\n  CPUs=lots\n", "cont2.conf", w2);
  });
  CHECK(msg == "cont2.conf:2: CPUs: 'lots' is not an integer");
}

TEST_CASE("a TRES weight on a TRES slurmctld does not track is refused with its line, as slurmctld refuses") {
  // slurm_get_tres_weight_array: "TRES weight 'gres:gpu' is not a configured TRES type" is fatal at
  // start; GRES are TRES only when AccountingStorageTRES names them (cpu, mem, node, billing, ... always).
  const auto import = [](const std::string& conf) {
    std::vector<std::string> w;
    return import_slurm_conf_text(conf, "w.conf", w);
  };
  const std::string nodes = "NodeName=a CPUs=4 Gres=gpu:1\n";
  CHECK(input_error(
            [&] { import(nodes + "PriorityWeightTRES=CPU=10,GRES/gpu=100\nPartitionName=p Nodes=a\n"); }) ==
        "w.conf:2: PriorityWeightTRES: weighs TRES 'gres/gpu', which is not tracked: add it to "
        "AccountingStorageTRES (slurmctld refuses to start: 'not a configured TRES type')");
  CHECK(input_error([&] {
          import(nodes + "PartitionName=p Nodes=a TRESBillingWeights=CPU=1,GRES/gpu=4\n");
        }).find("w.conf:2: TRESBillingWeights: weighs TRES 'gres/gpu'") == 0);
  // Tracked (the setting may come after the weights), or only always-tracked TRES weighed: accepted.
  const auto s = import(nodes + "PriorityWeightTRES=CPU=10,GRES/gpu=100\nAccountingStorageTRES=gres/gpu\n" +
                        "PartitionName=p Nodes=a TRESBillingWeights=CPU=1,Mem=0.25G,GRES/gpu=4\n");
  CHECK(s.scheduler.weight_tres.at("gres/gpu") == 100.0);
  CHECK(import(nodes + "PriorityWeightTRES=CPU=10,Mem=20,Node=5\nPartitionName=p Nodes=a\n")
            .scheduler.weight_tres.size() == 3);
}

TEST_CASE("Include resolves relative to the including file and refuses recursion") {
  const auto dir = testing::scratch_dir("slurm_conf_include");
  std::filesystem::create_directories(dir / "sub");
  write(dir / "slurm.conf", "ClusterName=inc\nInclude sub/nodes.conf\nPartitionName=p Nodes=ALL\n");
  write(dir / "sub" / "nodes.conf", "NodeName=a[1-2] CPUs=4\ninclude more.conf\n");
  write(dir / "sub" / "more.conf", "NodeName=b1 CPUs=2\n");
  std::vector<std::string> w;
  const Site s = import_slurm_conf((dir / "slurm.conf").string(), w);
  REQUIRE(s.nodes.size() == 3);
  CHECK(s.nodes[2].name == "b1");
  CHECK(s.partition("p").nodes.size() == 3);

  write(dir / "loop.conf", "NodeName=c1\nInclude loop2.conf\n");
  write(dir / "loop2.conf", "Include loop.conf\n");
  const auto msg = input_error([&] {
    std::vector<std::string> w2;
    import_slurm_conf((dir / "loop.conf").string(), w2);
  });
  CHECK(msg.find("loop2.conf:1: Include: recursive Include") != std::string::npos);
  const auto missing = input_error([&] {
    std::vector<std::string> w2;
    import_slurm_conf_text("Include nothere.conf\n", (dir / "x.conf").string(), w2);
  });
  CHECK(missing.find("x.conf:1: Include:") != std::string::npos);
}

TEST_CASE("partition Priority= sets both PriorityJobFactor and PriorityTier, explicit keys win") {
  const char* conf = R"(
NodeName=n1
PartitionName=a Nodes=n1 Priority=50
PartitionName=b Nodes=n1 Priority=50 PriorityTier=3
PartitionName=DEFAULT PriorityJobFactor=7
PartitionName=c Nodes=n1 Priority=50
PartitionName=d Nodes=n1
)";
  std::vector<std::string> w;
  const Site s = import_slurm_conf_text(conf, "prio.conf", w);
  CHECK(s.partition("a").priority_job_factor == 50);
  CHECK(s.partition("a").priority_tier == 50);
  CHECK(s.partition("b").priority_job_factor == 50);
  CHECK(s.partition("b").priority_tier == 3);
  CHECK(s.partition("c").priority_job_factor == 7);  // PriorityJobFactor (from DEFAULT) beats Priority
  CHECK(s.partition("c").priority_tier == 50);
  CHECK(s.partition("d").priority_job_factor == 7);
  CHECK(s.partition("d").priority_tier == 1);
}

TEST_CASE("bad values throw InputError naming file:line and the key") {
  const auto err = [](const std::string& conf) {
    return input_error([&] {
      std::vector<std::string> w;
      import_slurm_conf_text(conf, "bad.conf", w);
    });
  };
  CHECK(err("# c\nPriorityWeightAge=lots\n") == "bad.conf:2: PriorityWeightAge: 'lots' is not an integer");
  CHECK(err("NodeName=n1\nPartitionName=p Nodes=n1 MaxTime=1:2:3:4\n").rfind("bad.conf:2: MaxTime:", 0) == 0);
  CHECK(err("NodeName=n1\nPartitionName=p Nodes=n[1-2]\n") == "bad.conf:2: Nodes: unknown node 'n2'");
  CHECK(err("SchedulerParameters=bf_window=soon\n").rfind("bad.conf:1: SchedulerParameters: ", 0) == 0);
  CHECK(err("SchedulerParameters=bf_window=soon\n").find("bf_window") != std::string::npos);
  CHECK(err("PreemptMode=sometimes\n").rfind("bad.conf:1: PreemptMode:", 0) == 0);
  CHECK(err("PriorityFlags=FAIR_TREE,BOGUS\n").rfind("bad.conf:1: PriorityFlags:", 0) == 0);
  CHECK(err("NodeName=n1\nNodeName=n1\n") == "bad.conf:2: NodeName: node 'n1' defined twice");
  CHECK(err("NodeName=n1 Weight=-3\n") == "bad.conf:1: Weight: -3 is outside [0, 4294967295]");
  CHECK(err("NodeName=n1\nPartitionName=p Nodes=n1 OverSubscribe=MAYBE\n")
            .rfind("bad.conf:2: OverSubscribe:", 0) == 0);
  CHECK(err("JustAWord\n") == "bad.conf:1: JustAWord: expected Key=Value");
}

TEST_CASE("keys that are not modelled warn once each and do not fail") {
  const char* conf = R"(
SlurmUser=slurm
SlurmUser=other
AuthType=auth/munge
NodeName=n1 NodeAddr=10.0.0.1
NodeName=n2 NodeAddr=10.0.0.2
PartitionName=p Nodes=n[1-2] Hidden=YES
SchedulerParameters=bf_continue,nohold_on_prolog_fail,nohold_on_prolog_fail
)";
  std::vector<std::string> w;
  const Site s = import_slurm_conf_text(conf, "u.conf", w);
  CHECK(s.nodes.size() == 2);
  // Daemon and authentication settings change no scheduling decision: not a word about them.
  CHECK(count_containing(w, "SlurmUser") == 0);
  CHECK(count_containing(w, "AuthType") == 0);
  CHECK(count_containing(w, "NodeAddr") == 1);
  CHECK(count_containing(w, "Hidden") == 1);
  CHECK(count_containing(w, "nohold_on_prolog_fail") == 1);
  CHECK(s.scheduler.params.other.count("nohold_on_prolog_fail") == 1);
  CHECK(w.size() == 3);
}

TEST_CASE("a slurm.conf key slurmctld does not know is an error naming the key it resembles") {
  // Issue 23: these typos used to import with exit 0, the setting silently 0, empty or a default;
  // slurmctld refuses to start on them.
  const auto err = [](const std::string& conf) {
    return input_error([&] {
      std::vector<std::string> w;
      import_slurm_conf_text(conf, "typo.conf", w);
    });
  };
  CHECK(err("PriorityType=priority/multifactor\nPriorityWeightFairshar=10000\n") ==
        "typo.conf:2: PriorityWeightFairshar: unknown key 'PriorityWeightFairshar' (did you mean "
        "PriorityWeightFairshare?); --lenient ignores it");
  CHECK(err("NodeName=n1 CPUs=8 Featuer=bigmem\n") ==
        "typo.conf:1: Featuer: unknown NodeName key 'Featuer' (did you mean Feature?); --lenient ignores it");
  CHECK(err("NodeName=n1 RealMemroy=1000\n").find("did you mean RealMemory?") != std::string::npos);
  CHECK(err("NodeName=n1\nPartitionName=p Nodes=n1 MaxTiem=60\n")
            .rfind("typo.conf:2: MaxTiem: unknown PartitionName key 'MaxTiem' (did you mean MaxTime?)", 0) ==
        0);
  // Nothing close: no suggestion.
  CHECK(err("Zzzzzzzzzz=1\n") == "typo.conf:1: Zzzzzzzzzz: unknown key 'Zzzzzzzzzz'; --lenient ignores it");
  // Keys 21.08 removed: unknown to 22.05 (which says how to import an older site's file), known to the
  // versions that read them (slurm_conf_options of 20.11.9 and 20.02.7), e.g. ubccr's micro cluster's
  // slurm.conf for Slurm 20.02 has CacheGroups, CheckpointType and DefaultStoragePort.
  CHECK(err("CacheGroups=0\n") ==
        "typo.conf:1: CacheGroups: unknown key 'CacheGroups' (slurmctld read it up to 20.11: --slurm-version "
        "for "
        "an older site); --lenient ignores it");
  const auto older = [](const std::string& conf, const std::string& version) {
    SlurmConfigFiles files;
    files.slurm_version = version;
    const auto dir = testing::scratch_dir("older_keys");
    files.slurm_conf = (dir / "slurm.conf").string();
    write(files.slurm_conf, conf);
    std::vector<std::string> w;
    return import_slurm_config(files, w);
  };
  CHECK_NOTHROW(older("CacheGroups=0\nCheckpointType=checkpoint/none\nDefaultStoragePort=29001\n", "20.02"));
  CHECK_NOTHROW(older("CacheGroups=0\n", "20.11"));
  CHECK_THROWS_AS(older("CacheGroups=0\n", "21.08"), InputError);
  CHECK_NOTHROW(older("MsgAggregationParams=WindowMsgs=1\n", "20.02"));
  CHECK_THROWS_AS(older("MsgAggregationParams=WindowMsgs=1\n", "20.11"), InputError);

  // --lenient: a warning with the same words, and the setting keeps its default.
  std::vector<std::string> w;
  const Site s = import_slurm_conf_text("PriorityWeightFairshar=10000\nPriorityWeightAge=5\n", "typo.conf", w,
                                        /*lenient=*/true);
  CHECK(s.scheduler.weight_fairshare == 0);
  CHECK(s.scheduler.weight_age == 5);
  REQUIRE(w.size() == 1);
  CHECK(w[0] ==
        "typo.conf:1: unknown key 'PriorityWeightFairshar' (did you mean PriorityWeightFairshare?); "
        "ignored (--lenient)");
}

TEST_CASE("scheduling plugins: a name slurmctld lacks stops the import, one it has but not modelled warns") {
  // A typo in SchedulerType used to turn backfill off without a word (backfill runs only for the exact
  // name sched/backfill); slurmctld cannot load a plugin it does not have and refuses to start.
  const auto err = [](const std::string& conf) {
    return input_error([&] {
      std::vector<std::string> w;
      import_slurm_conf_text(conf, "p.conf", w);
    });
  };
  CHECK(
      err("SchedulerType=sched/backfil\n") ==
      "p.conf:1: SchedulerType: slurmctld has no SchedulerType plugin 'sched/backfil' (it would not start); "
      "known: sched/backfill, sched/builtin, sched/hold");
  CHECK(err("SelectType=select/cons_tress\n").rfind("p.conf:1: SelectType: slurmctld has no SelectType", 0) ==
        0);
  CHECK(err("PriorityType=priority/fairshare\n").find("known: priority/multifactor, priority/basic") !=
        std::string::npos);
  CHECK(err("PreemptType=preempt/qso\n").find("preempt/qso") != std::string::npos);
  CHECK(err("TopologyPlugin=topology/tre\n").find("known: topology/none, topology/default, topology/tree") !=
        std::string::npos);
  // Known plugins, modelled: no warning; the value is kept (lower case).
  std::vector<std::string> w;
  Site s = import_slurm_conf_text(
      "SchedulerType=sched/builtin\nSelectType=Select/Cons_Res\nPreemptType=preempt/"
      "qos\nTopologyPlugin=topology/none\n",
      "p.conf", w);
  CHECK(w.empty());
  CHECK(s.scheduler.select_type == "select/cons_res");
  CHECK(s.scheduler.topology_plugin == "topology/flat");
  // Known, not modelled: one warning each saying what is done instead.
  w.clear();
  s = import_slurm_conf_text(
      "SelectType=select/linear\nPriorityType=priority/basic\nTopologyPlugin=topology/3d_torus\n", "p.conf",
      w);
  REQUIRE(w.size() == 3);
  CHECK(w[0] ==
        "p.conf:1: SelectType=select/linear is not modelled: jobs are placed as under select/cons_tres, "
        "not on whole nodes");
  CHECK(w[1].rfind("p.conf:2: PriorityType=priority/basic is not modelled: priorities are computed by", 0) ==
        0);
  CHECK(w[2] ==
        "p.conf:3: TopologyPlugin=topology/3d_torus is not modelled: jobs are placed as under topology/flat");
  // A site YAML is held to the same names.
  const auto yaml_err = input_error([] {
    parse_site_yaml(
        "nodes:\n  - names: n1\n    cpus: 1\n    real_memory_mb: 1\nscheduler:\n  scheduler_type: "
        "sched/backfil\n",
        "s.yaml");
  });
  CHECK(yaml_err.find("slurmctld has no SchedulerType plugin 'sched/backfil'") != std::string::npos);
}

TEST_CASE("a known slurm.conf key that changes scheduling but is not modelled says what it changes") {
  std::vector<std::string> w;
  import_slurm_conf_text("SchedulerTimeSlice=60\nSlurmctldLogFile=/var/log/x\n", "t.conf", w);
  REQUIRE(w.size() == 1);
  CHECK(w[0] == "t.conf:1: SchedulerTimeSlice is not modelled: gang time slicing is not modelled");
  // A topology plugin other than flat and tree: placed as flat, and said so.
  w.clear();
  const auto torus = import_slurm_conf_text(
      "TopologyPlugin=topology/3d_torus\nNodeName=n1 CPUs=8 RealMemory=1000\nPartitionName=p Nodes=n1\n",
      "t.conf", w);
  REQUIRE(w.size() == 1);
  // Its site YAML loads again (it named a plugin the YAML reader refuses).
  CHECK(torus.scheduler.topology_plugin == "topology/flat");
  CHECK(parse_site_yaml(site_to_yaml(torus), "site.yaml").scheduler.topology_plugin == "topology/flat");
  CHECK(w[0] ==
        "t.conf:1: TopologyPlugin=topology/3d_torus is not modelled: jobs are placed as under topology/flat");
}

TEST_CASE("SchedulerParameters as slurmctld reads it: a doubled '=' and the old name max_job_bf") {
  // Issue 22, finding 8: "SchedulerParameters==bf_max_job_user=20" was dropped.
  std::vector<std::string> w;
  const Site s =
      import_slurm_conf_text("SchedulerParameters==bf_max_job_user=20,max_job_bf=77\n", "o.conf", w);
  CHECK(s.scheduler.params.bf_max_job_user == 20);
  CHECK(s.scheduler.params.bf_max_job_test == 77);
  CHECK(w.empty());
}

TEST_CASE("nodes take slurmctld's order, by name, whatever order slurm.conf or a site YAML lists them in") {
  // The micro cluster's slurm.conf (ubccr slurm_sim_tools) lists n[1-4], m[1-4], g1, b1; its real
  // Slurm 20.02 run placed the first 12-CPU job, on an idle cluster, on b1: slurmctld sorts its node
  // table with strnatcmp (read_config.c), and best-fit ties go to the lowest index.
  std::vector<std::string> w;
  const Site s = import_slurm_conf_text(
      "NodeName=n[1-2] CPUs=12 RealMemory=48000\nNodeName=m[9-10] CPUs=12 RealMemory=48000\n"
      "NodeName=g1 CPUs=12 RealMemory=48000 Gres=gpu:2\nNodeName=b1 CPUs=12 RealMemory=512000\n"
      "PartitionName=normal Nodes=n[1-2],m[9-10],g1,b1 Default=YES\n",
      "micro.conf", w);
  std::vector<std::string> names;
  for (const auto& n : s.nodes) names.push_back(n.name);
  CHECK(names == std::vector<std::string>{"b1", "g1", "m9", "m10", "n1", "n2"});
  CHECK(s.find_node("g1")->gres.size() == 1);  // each node keeps its own line's values
  CHECK(s.find_node("b1")->real_memory_mb == 512000);
  CHECK(nodes_in_slurmctld_order(s));

  // The same nodes from a site YAML that lists them in the file's order.
  auto yaml = site_to_yaml(s);
  Site reversed = s;
  std::reverse(reversed.nodes.begin(), reversed.nodes.end());
  CHECK_FALSE(nodes_in_slurmctld_order(reversed));
  CHECK_THROWS_AS(validate(reversed), std::invalid_argument);  // a hand-made site must be ordered
  order_nodes_as_slurmctld(reversed);
  CHECK(site_to_yaml(reversed) == yaml);
  const Site read_back = parse_site_yaml(
      "nodes:\n  - names: n[1-2]\n    cpus: 12\n    real_memory_mb: 48000\n"
      "  - names: b1\n    cpus: 12\n    real_memory_mb: 512000\n"
      "partitions:\n  - name: normal\n    nodes: n[1-2],b1\n    default: true\n",
      "site.yaml");
  CHECK(read_back.nodes.front().name == "b1");
}

TEST_CASE("CPUs follow Slurm\'s inference from Boards, Sockets, SocketsPerBoard and CPUs") {
  const char* conf = R"(
NodeName=a1 Sockets=2 CoresPerSocket=8 ThreadsPerCore=2
NodeName=b1 CPUs=24 CoresPerSocket=6
NodeName=c1 Boards=2 SocketsPerBoard=2 CoresPerSocket=4
NodeName=d1 CPUs=12
NodeName=e1
)";
  std::vector<std::string> w;
  const Site s = import_slurm_conf_text(conf, "cpu.conf", w);
  CHECK(s.find_node("a1")->cpus == 32);
  CHECK(s.find_node("b1")->sockets == 4);  // CPUs / (cores x threads)
  CHECK(s.find_node("b1")->cpus == 24);
  CHECK(s.find_node("c1")->sockets == 4);  // Boards x SocketsPerBoard
  CHECK(s.find_node("c1")->cpus == 16);
  CHECK(s.find_node("d1")->sockets == 12);
  CHECK(s.find_node("d1")->cpus == 12);
  CHECK(s.find_node("e1")->cpus == 1);
  CHECK(s.find_node("e1")->real_memory_mb == 1);
  CHECK(w.empty());
}

TEST_CASE("PriorityFlags keep FAIR_TREE unless NO_FAIR_TREE or DEPTH_OBLIVIOUS clears it") {
  std::vector<std::string> w;
  CHECK(import_slurm_conf_text("PriorityFlags=MAX_TRES", "f", w).scheduler.priority_flags ==
        std::set<std::string>{"FAIR_TREE", "MAX_TRES"});
  CHECK(import_slurm_conf_text("PriorityFlags=no_fair_tree", "f", w).scheduler.priority_flags ==
        std::set<std::string>{"NO_FAIR_TREE"});
  CHECK(import_slurm_conf_text("PriorityFlags=DEPTH_OBLIVIOUS,SMALL_RELATIVE_TO_TIME", "f", w)
            .scheduler.priority_flags == std::set<std::string>{"DEPTH_OBLIVIOUS", "SMALL_RELATIVE_TO_TIME"});
  CHECK(import_slurm_conf_text("ClusterName=x", "f", w).scheduler.priority_flags ==
        std::set<std::string>{"FAIR_TREE"});
}

TEST_CASE("partition options: OverSubscribe forms, legacy Shared, Nodes=ALL, time forms, limits") {
  const char* conf = R"(
NodeName=z9,a[1-3]
PartitionName=p1 Nodes=a3,a1,z9 OverSubscribe=FORCE:2 MaxTime=2-12:30:00 DefaultTime=90
PartitionName=p2 Nodes=ALL Shared=YES MaxNodes=UNLIMITED MinNodes=2 ExclusiveUser=YES
PartitionName=p3 Nodes=a1 OverSubscribe=EXCLUSIVE AllowAccounts=ALL DenyAccounts=Bad,worse PreemptMode=SUSPEND,GANG
PartitionName=p4 Nodes=a1 Shared=NO OverSubscribe=YES GraceTime=30 OverTimeLimit=5 TRESBillingWeights=CPU=1.0,Mem=0.25G
PartitionName=p5 Nodes=a1 MaxMemPerCPU=100 MaxMemPerNode=5000 DefMemPerNode=64 AllowQOS=High,low
)";
  std::vector<std::string> w;
  const Site s = import_slurm_conf_text(conf, "part.conf", w);
  const auto& p1 = s.partition("p1");
  CHECK(p1.nodes == std::vector<std::string>{"z9", "a1", "a3"});  // node index order
  CHECK(p1.oversubscribe == OverSubscribe::kForce);
  CHECK(p1.oversubscribe_count == 2);
  CHECK(p1.max_time == 2 * 86400 + 12 * 3600 + 30 * 60);
  CHECK(p1.default_time == 90 * 60);
  const auto& p2 = s.partition("p2");
  CHECK(p2.nodes.size() == 4);
  CHECK(p2.oversubscribe == OverSubscribe::kYes);
  CHECK(p2.oversubscribe_count == 4);
  CHECK(p2.max_nodes == 0);
  CHECK(p2.min_nodes == 2);
  CHECK(p2.exclusive_user);
  const auto& p3 = s.partition("p3");
  CHECK(p3.oversubscribe == OverSubscribe::kExclusive);
  CHECK(p3.allow_accounts.empty());
  CHECK(p3.deny_accounts == std::vector<std::string>{"bad", "worse"});
  CHECK(p3.preempt_mode == PreemptMode::kSuspendGang);
  const auto& p4 = s.partition("p4");
  CHECK(p4.oversubscribe == OverSubscribe::kYes);  // OverSubscribe beats the legacy Shared
  CHECK(p4.grace_time == 30);
  CHECK(p4.over_time_limit == 300);
  CHECK(p4.tres_billing_weights.at("mem") == doctest::Approx(0.25 / 1024));
  const auto& p5 = s.partition("p5");
  CHECK(p5.max_mem_per_cpu_mb == 0);  // MaxMemPerNode wins over MaxMemPerCPU
  CHECK(p5.max_mem_per_node_mb == 5000);
  CHECK(p5.def_mem_per_node_mb == 64);
  CHECK(p5.allow_qos == std::vector<std::string>{"high", "low"});
  CHECK(s.partition("p4").preempt_mode == PreemptMode::kUnset);
}

TEST_CASE("DefCpuPerGPU and DefMemPerGPU: the partition's own, else slurm.conf's, as slurmctld reads them") {
  // read_config.c (22.05): a partition line's (or PartitionName=DEFAULT's) values go to its
  // job_defaults_list, the global ones to slurm.conf's; _set_gpu_defaults takes the partition's when
  // it has one (0 included), else the global one.
  const char* conf = R"(
DefCpuPerGPU=2
DefMemPerGPU=4000
NodeName=n[1-2] CPUs=8 RealMemory=16000 Gres=gpu:2
PartitionName=inherits Nodes=ALL
PartitionName=own Nodes=ALL DefMemPerGPU=6000 DefCPUPerGPU=3
PartitionName=zero Nodes=ALL DefMemPerGPU=0
)";
  std::vector<std::string> w;
  const Site s = import_slurm_conf_text(conf, "g.conf", w);
  CHECK(s.partition("inherits").def_cpu_per_gpu == 2);
  CHECK(s.partition("inherits").def_mem_per_gpu_mb == 4000);
  CHECK(s.partition("own").def_cpu_per_gpu == 3);
  CHECK(s.partition("own").def_mem_per_gpu_mb == 6000);
  CHECK(s.partition("zero").def_mem_per_gpu_mb == 0);
  CHECK(s.partition("zero").def_cpu_per_gpu == 2);
  // No longer "not applied" warnings.
  for (const auto& x : w) CHECK(x.find("GPU") == std::string::npos);
  // Without either: unset.
  const Site none = import_slurm_conf_text("NodeName=n1 CPUs=4\nPartitionName=p Nodes=n1\n", "n.conf", w);
  CHECK_FALSE(none.partition("p").def_cpu_per_gpu.has_value());
  CHECK_FALSE(none.partition("p").def_mem_per_gpu_mb.has_value());
  // A value that is not a count fails, naming file, line and key.
  try {
    (void)import_slurm_conf_text("NodeName=n1 CPUs=4\nPartitionName=p Nodes=n1 DefMemPerGPU=lots\n", "b.conf",
                                 w);
    FAIL("accepted DefMemPerGPU=lots");
  } catch (const InputError& e) {
    CHECK(std::string(e.what()).find("b.conf:2") != std::string::npos);
    CHECK(std::string(e.what()).find("DefMemPerGPU") != std::string::npos);
  }
}

TEST_CASE("the global DefMemPerCPU/DefMemPerNode is the default of partitions without their own") {
  // job_mgr.c (22.05): a job without --mem gets its partition's DefMem if set, else slurm.conf's.
  // Read as slurmctld reads them: the per-node form wins over the per-CPU one in either order.
  const char* conf = R"(
DefMemPerCPU=2500
NodeName=n[1-2] CPUs=8 RealMemory=16000
PartitionName=inherits Nodes=ALL
PartitionName=own Nodes=ALL DefMemPerNode=3000
PartitionName=both Nodes=ALL DefMemPerNode=700 DefMemPerCPU=100
PartitionName=DEFAULT DefMemPerCPU=50
PartitionName=fromdefault Nodes=ALL
)";
  std::vector<std::string> w;
  const Site s = import_slurm_conf_text(conf, "m.conf", w);
  CHECK(s.partition("inherits").def_mem_per_cpu_mb == 2500);
  CHECK(s.partition("inherits").def_mem_per_node_mb == 0);
  CHECK(s.partition("own").def_mem_per_node_mb == 3000);
  CHECK(s.partition("own").def_mem_per_cpu_mb == 0);
  CHECK(s.partition("both").def_mem_per_node_mb == 700);
  CHECK(s.partition("both").def_mem_per_cpu_mb == 0);
  CHECK(s.partition("fromdefault").def_mem_per_cpu_mb == 50);
  CHECK(w == std::vector<std::string>{"m.conf:6: DefMemPerCPU ignored, since it's mutually exclusive with "
                                      "DefMemPerNode (as Slurm does)"});

  // The global per-node form wins too, written before or after the per-CPU one.
  w.clear();
  const Site g = import_slurm_conf_text(
      "DefMemPerNode=9000\nDefMemPerCPU=10\nNodeName=n1 CPUs=4\n"
      "PartitionName=p Nodes=n1\n",
      "g.conf", w);
  CHECK(g.partition("p").def_mem_per_node_mb == 9000);
  CHECK(g.partition("p").def_mem_per_cpu_mb == 0);
  CHECK(w.size() == 1);
  // MaxMemPerCPU/MaxMemPerNode likewise; a per-CPU cap says what of it is not modelled.
  w.clear();
  const Site m = import_slurm_conf_text(
      "MaxMemPerCPU=300\nNodeName=n1 CPUs=4\nPartitionName=p Nodes=n1 MaxMemPerNode=900\n"
      "PartitionName=q Nodes=n1\n",
      "x.conf", w);
  CHECK(m.partition("p").max_mem_per_node_mb == 900);
  CHECK(m.partition("p").max_mem_per_cpu_mb == 0);
  CHECK(m.partition("q").max_mem_per_cpu_mb == 300);
  REQUIRE(w.size() == 1);
  // UNLIMITED, as slurm.conf may say it: no cap.
  CHECK(import_slurm_conf_text("NodeName=n1\nPartitionName=p Nodes=n1 MaxMemPerNode=UNLIMITED\n", "u.conf", w)
            .partition("p")
            .max_mem_per_node_mb == 0);
  CHECK(w[0].rfind("MaxMemPerCPU=300 (partition q): a job asking more memory per CPU gets more CPUs", 0) ==
        0);
  CHECK(input_error([] {
          std::vector<std::string> v;
          import_slurm_conf_text("DefMemPerCPU=lots\nNodeName=n1\n", "bad.conf", v);
        }).rfind("bad.conf:1: DefMemPerCPU", 0) == 0);
}

TEST_CASE("node Gres values parse with types, comma lists, K suffixes and socket bindings") {
  const auto g = parse_node_gres("gpu:tesla_v100:2(S:0-1),bandwidth:lustre:4K,mps:100,nic");
  REQUIRE(g.size() == 4);
  CHECK(g[0] == NodeGres{"gpu", "tesla_v100", 2});
  CHECK(g[1] == NodeGres{"bandwidth", "lustre", 4096});
  CHECK(g[2] == NodeGres{"mps", "", 100});
  CHECK(g[3] == NodeGres{"nic", "", 1});
  CHECK(parse_node_gres("gpu:a100").front() == NodeGres{"gpu", "a100", 1});
  CHECK(parse_node_gres("").empty());
  CHECK_THROWS_AS(parse_node_gres(":2"), std::invalid_argument);
}

TEST_CASE(
    "gres.conf fills slurm.conf GRES, where its count differs slurm.conf's is scheduled, and a node given "
    "fewer is refused at registration") {
  // gres.c _node_config_validate: gres_cnt_avail = gres_cnt_config (slurm.conf's Gres=), whatever
  // slurmd finds; a node that finds fewer is refused (INVALID_REG, drained) in 22.05 whatever
  // SlurmdParameters says, as real 22.05 did with slurm_sim_tools' micro cluster (its gres.conf gives
  // g1 `Name=gpu` without Count where slurm.conf has gpu:2: "gres/gpu count reported lower than
  // configured (0 < 2)", docs/fidelity.md scenario 41).
  const char* conf = "NodeName=g[1-2] Gres=gpu:v100:4\nNodeName=c1\nNodeName=g3 Gres=gpu:2\n";
  std::vector<std::string> w;
  Site s = import_slurm_conf_text(conf, "slurm.conf", w);
  const char* gres = R"(
AutoDetect=off
NodeName=g1 Name=gpu File=/dev/nvidia[0-1]   # untyped: sets the node's only gpu GRES
NodeName=g2 Name=gpu Type=v100 File=/dev/nvidia[0-2]
NodeName=c1 Name=nvme Count=1K
NodeName=c1 Name=gpu Count=1                 # no File: slurmd discards it
NodeName=g3 Name=gpu File=/dev/nvidia[0-2]
NodeName=zz Name=gpu File=/dev/nvidia0
)";
  apply_gres_conf(gres, "gres.conf", s, w);
  CHECK(s.find_node("g1")->gres == std::vector<NodeGres>{{"gpu", "v100", 4}});
  CHECK(s.find_node("g2")->gres == std::vector<NodeGres>{{"gpu", "v100", 4}});
  CHECK(s.find_node("c1")->gres == std::vector<NodeGres>{{"nvme", "", 1024}});
  CHECK(s.find_node("g3")->gres == std::vector<NodeGres>{{"gpu", "", 2}});  // the excess is ignored
  CHECK(count_containing(w, "node zz") == 1);
  CHECK(count_containing(w, "option AutoDetect") == 0);  // read: off, so GPUs need File=
  CHECK(count_containing(w, "gres.conf:6: a GPU line without File=") == 1);
  CHECK(count_containing(w, "gres.conf gives 2 gpu on g1 (and others alike) where slurm.conf configures 4") ==
        1);
  CHECK(count_containing(w, "refuses such a node's registration") == 2);  // g1 (2 < 4) and g2 (3 < 4)
  CHECK(count_containing(w, "the excess ignored") == 1);                  // g3 (3 > 2)
  // g1 and g2 are out of service from the start (time 0) to the end, drained with slurmctld's reason.
  CHECK(s.outages ==
        std::vector<NodeOutage>{
            {"g1", 0, kUnlimited, "DRAIN", "gres/gpu count reported lower than configured (2 < 4)"},
            {"g2", 0, kUnlimited, "DRAIN", "gres/gpu count reported lower than configured (3 < 4)"}});
  const auto msg =
      input_error([&] { apply_gres_conf("NodeName=g1 Name=gpu Count=two\n", "gres2.conf", s, w); });
  CHECK(msg == "gres2.conf:1: Count: 'two' is not a count");
}

TEST_CASE("a node given fewer GRES than slurm.conf stays in service where the site's Slurm keeps it") {
  // The override of _node_config_validate per version: FastSchedule=2 up to 18.08, FastSchedule other
  // than 1 in 19.05, SlurmdParameters=config_overrides in 20.02-21.08, none from 22.05; a front end.
  const auto outages = [](const std::string& settings, const std::string& version,
                          const std::string& gres_conf = "NodeName=g1 Name=gpu\n") {
    SlurmConfigFiles files;
    files.slurm_version = version;
    const auto dir = testing::scratch_dir("low_gres");
    files.slurm_conf = (dir / "slurm.conf").string();
    write(files.slurm_conf, settings + "\nGresTypes=gpu\nNodeName=g1 Gres=gpu:2\n");
    write((dir / "gres.conf").string(), gres_conf);  // beside slurm.conf: read
    std::vector<std::string> w;
    const Site site = import_slurm_config(files, w);
    CHECK(site.find_node("g1")->gres == std::vector<NodeGres>{{"gpu", "", 2}});
    return site.outages;
  };
  // slurmctld 22.05.8's words for the micro cluster's g1 (slurmd discards a GPU without File= since 20.02).
  CHECK(outages("SlurmdParameters=config_overrides", "22.05") ==
        std::vector<NodeOutage>{
            {"g1", 0, kUnlimited, "DRAIN", "gres/gpu count reported lower than configured (0 < 2)"}});
  CHECK(outages("SlurmdParameters=config_overrides", "21.08").empty());
  CHECK(outages("SlurmdParameters=shutdown_on_reboot", "20.02").size() == 1);
  CHECK(outages("FastSchedule=0", "19.05").empty());
  CHECK(outages("FastSchedule=1", "19.05").front().reason ==
        "gres/gpu count reported lower than configured (1 < 2)");  // 19.05 counts a GPU without File
  CHECK(outages("FastSchedule=0", "17.11").size() == 1);
  CHECK(outages("FastSchedule=2", "17.11").empty());
  CHECK(outages("", "17.11").size() == 1);  // FastSchedule=1 by default
  // A front end registers the nodes (ubccr's simulated sites: FrontendName=localhost, gres.conf GPUs
  // without File=, which their real runs scheduled): nodes kept, counts as written.
  CHECK(outages("FrontendName=localhost", "22.05").empty());
  // With AutoDetect, slurmd finds the GPUs itself: the lines' counts stand for what it finds.
  CHECK(outages("", "22.05", "AutoDetect=nvml\nNodeName=g1 Name=gpu Count=2\n").empty());
  CHECK(outages("", "22.05", "AutoDetect=nvml\nNodeName=g1 Name=gpu\n").front().reason ==
        "gres/gpu count reported lower than configured (1 < 2)");
}

// ----------------------------------------------------------------------------------------------------
// sacctmgr

TEST_CASE("ub_medium sacctmgr.script builds the QOS, account tree and user associations") {
  Site s;
  std::vector<std::string> warnings;
  if (!import_ub_medium(s, warnings)) return;
  REQUIRE(s.qos.size() == 5);
  CHECK_FALSE(s.find_qos("normal"));
  CHECK(s.qos_named("general-compute").priority == 0);
  CHECK(s.qos_named("supporters").priority == 200);
  CHECK(s.qos_named("priority").priority == 200);
  CHECK(s.qos_named("priority-supporters").priority == 400);
  CHECK(s.qos_named("debug").priority == 0);
  CHECK(s.qos_named("general-compute").limits.max_submit_jobs_per_user == 10000);
  CHECK(s.qos_named("debug").limits.max_submit_jobs_per_user == 20);

  REQUIRE(s.accounts.size() == 63);  // root, account0, account001..account061
  const auto& root = *s.find_account("root");
  CHECK(root.parent.empty());
  CHECK(root.shares == Shares{1, false});
  CHECK(root.qos == std::vector<std::string>{"general-compute", "supporters", "priority",
                                             "priority-supporters", "debug"});
  const auto& a0 = *s.find_account("account0");
  CHECK(a0.parent == "root");
  CHECK(a0.shares == Shares{100, false});
  CHECK(a0.qos.empty());  // inherits root's list
  CHECK(s.find_account("account061")->shares == Shares{100, false});
  CHECK(s.find_account("account004")->qos ==
        std::vector<std::string>{"priority-supporters", "supporters", "general-compute", "debug"});

  REQUIRE(s.users.size() == 97);  // admin + user001..user095 + root (add cluster creates root's user)
  const auto& admin = *s.find_user("admin");
  CHECK(admin.default_account == "account0");
  CHECK(admin.admin_level == "Administrator");
  REQUIRE(find_assoc(s, "admin", "account0"));  // no Account=: the DefaultAccount association
  CHECK(find_assoc(s, "admin", "account0")->limits.max_submit_jobs_per_user == 1000);
  CHECK(find_assoc(s, "admin", "account0")->shares == Shares{1, false});
  CHECK(s.find_user("user083")->admin_level == "Administrator");
  CHECK(s.find_user("user001")->admin_level == "None");

  // 95 users with one Account each, 9 of them with a different DefaultAccount (an extra association)
  // ... and root's own user association, which `add cluster` creates under the root account.
  CHECK(s.associations.size() == 1 + 95 + 9 + 1);
  REQUIRE(find_assoc(s, "root", "root"));
  CHECK(find_assoc(s, "root", "root")->shares == Shares{1, false});
  const auto& u1 = *find_assoc(s, "user001", "account001");
  CHECK(u1.shares.parent);
  CHECK(u1.qos == std::vector<std::string>{"debug", "general-compute"});
  CHECK(find_assoc(s, "user060", "account045")->shares == Shares{1, false});
  CHECK(s.find_user("user025")->default_account == "account021");
  CHECK(assoc_count(s, "user025") == 2);
  REQUIRE(find_assoc(s, "user025", "account021"));
  CHECK(find_assoc(s, "user025", "account021")->shares.parent);
  CHECK(find_assoc(s, "user025", "account021")->qos == std::vector<std::string>{"debug", "general-compute"});
  CHECK(find_assoc(s, "user025", "account018")->qos == std::vector<std::string>{"debug", "general-compute"});
  CHECK(find_assoc(s, "user017", "account004")->qos ==
        std::vector<std::string>{"priority-supporters", "supporters", "general-compute", "debug"});
  CHECK(assoc_count(s, "user014") == 1);

  CHECK_NOTHROW(validate(s));
}

TEST_CASE("sacctmgr scripts: quoting, flags, case, += / -=, limits, modify and remove") {
  const char* script = R"(
sacctmgr -i add qos high Priority=100 GrpTRES=cpu=64,gres/gpu=4 MaxWall=2-00:00:00 Flags=DenyOnLimit,nodecay
ADD QOS Name=low UsageFactor=0.5 MaxTRESPerUser=cpu=8 MaxJobsPU=3 GraceTime=60 PreemptExemptTime=10:00
add qos acc MaxJobsAccruePA=4 MaxJobsAccruePerU=2 GrpJobsA=6
modify qos where name=high set Preempt=low PreemptMode=requeue GrpJobs=10
modify qos high set GrpTRES=gres/gpu=-1
add cluster Name=c1
add account physics Fairshare=10 Description="Physics dept # not a comment"
add account theory Parent=physics QOS=high,low DefaultQOS=low
add account old
modify account where name=theory set qos-=low
modify account name=physics set qos+=high
add user alice Account=theory,physics Partition=p1 MaxJobs=5
add user bob DefaultAccount=physics Account=theory Fairshare=parent MaxJobsAccrue=1
modify user where name=bob account=theory set qos=low MaxSubmitJobs=7
modify user name=bob set DefaultAccount=theory AdminLevel=Operator
remove account where name=old
remove user alice account=physics
list assoc tree
)";
  Site s;
  std::vector<std::string> w;
  import_sacctmgr_script_text(script, "script.txt", s, w);
  REQUIRE(s.qos.size() == 4);  // normal (fresh database), high, low, acc
  const auto& high = s.qos_named("high");
  CHECK(high.priority == 100);
  CHECK(high.limits.grp_tres == TresMap{{"cpu", 64}});
  CHECK(high.limits.max_wall == 2 * 86400);
  CHECK(high.limits.grp_jobs == 10);
  CHECK(high.flags == std::set<std::string>{"DenyOnLimit", "NoDecay"});
  CHECK(high.preempt == std::vector<std::string>{"low"});
  CHECK(high.preempt_mode == PreemptMode::kRequeue);
  const auto& low = s.qos_named("low");
  CHECK(low.usage_factor == 0.5);
  CHECK(low.limits.max_tres_per_user == TresMap{{"cpu", 8}});
  CHECK(low.limits.max_jobs_per_user == 3);
  CHECK(low.grace_time == 60);
  CHECK(low.preempt_exempt_time == 600);
  // sacctmgr's shortest prefixes: MaxJobsAccruePerU (17 letters), GrpJobsA (8)
  const auto& acc = s.qos_named("acc").limits;
  CHECK(acc.max_jobs_accrue_per_account == 4);
  CHECK(acc.max_jobs_accrue_per_user == 2);
  CHECK(acc.grp_jobs_accrue == 6);

  CHECK(s.cluster_name == "c1");
  CHECK(s.find_account("root")->qos == std::vector<std::string>{"normal"});
  CHECK(s.find_account("physics")->shares == Shares{10, false});
  CHECK(s.find_account("physics")->qos ==
        std::vector<std::string>{"normal", "high"});  // += on the inherited list
  CHECK(s.find_account("theory")->parent == "physics");
  CHECK(s.find_account("theory")->qos == std::vector<std::string>{"high"});
  CHECK(s.find_account("theory")->default_qos == "low");
  CHECK_FALSE(s.find_account("old"));

  CHECK(assoc_count(s, "alice") == 1);
  CHECK(find_assoc(s, "alice", "theory")->partition == "p1");
  CHECK(find_assoc(s, "alice", "theory")->limits.max_jobs_per_user == 5);
  CHECK(s.find_user("alice")->default_account == "theory");  // first account when no DefaultAccount
  CHECK(assoc_count(s, "bob") == 2);
  CHECK(find_assoc(s, "bob", "theory")->qos == std::vector<std::string>{"low"});
  CHECK(find_assoc(s, "bob", "theory")->limits.max_submit_jobs_per_user == 7);
  CHECK(find_assoc(s, "bob", "theory")->limits.max_jobs_accrue_per_user == 1);
  CHECK(find_assoc(s, "bob", "physics")->qos.empty());
  CHECK(find_assoc(s, "bob", "physics")->shares.parent);
  CHECK(s.find_user("bob")->default_account == "theory");
  CHECK(s.find_user("bob")->admin_level == "Operator");
  CHECK_NOTHROW(validate(s));
}

TEST_CASE("sacctmgr commands that sacctmgr refuses throw InputError with the line") {
  const auto err = [](const std::string& script) {
    return input_error([&] {
      Site s;
      std::vector<std::string> w;
      import_sacctmgr_script_text(script, "s.txt", s, w);
    });
  };
  CHECK(err("add account a\nadd account b Parent=nosuch\n") ==
        "s.txt:2: Parent: parent account 'nosuch' does not exist");
  CHECK(err("add user u Account=nosuch\n") == "s.txt:1: Account: account 'nosuch' does not exist");
  CHECK(err("add account a QOS=ghost\n") == "s.txt:1: QOS: unknown QOS 'ghost'");
  CHECK(err("add qos q Priority=high\n") == "s.txt:1: Priority: 'high' is not a non-negative integer");
  CHECK(err("add user u\n") == "s.txt:1: Account: add user needs an Account or DefaultAccount");
  CHECK(err("frobnicate qos x\n") == "s.txt:1: frobnicate: unknown sacctmgr command");
  CHECK(err("add account a\nadd user u Account=a\nmodify user u set DefaultAccount=root\n") ==
        "s.txt:3: DefaultAccount: user 'u' has no association with account 'root'");
}

TEST_CASE("association dumps (sacctmgr -P show assoc) rebuild the tree from Par Name or tree indentation") {
  // `tree` output indents Account by depth; -p lines may end with a '|'.
  // Cluster|Account|User|Partition|Share|Priority|GrpJobs|GrpTRES|GrpSubmit|MaxJobs|MaxTRES|MaxSubmit|MaxWall|
  // QOS|Def QOS|GrpTRESMins
  const auto row = [](std::vector<std::string> f) {
    f.resize(16);
    std::string out;
    for (const auto& x : f) out += x + "|";  // sacctmgr -p ends every line with '|'
    return out + "\n";
  };
  const std::string dump =
      row({"Cluster", "Account", "User", "Partition", "Share", "Priority", "GrpJobs", "GrpTRES", "GrpSubmit",
           "MaxJobs", "MaxTRES", "MaxSubmit", "MaxWall", "QOS", "Def QOS", "GrpTRESMins"}) +
      row({"c1", "root", "", "", "1", "", "", "", "", "", "", "", "", "normal"}) +
      row({"c1", " root", "root", "", "1"}) +
      row({"c1", " physics", "", "", "10", "", "", "", "", "", "", "", "", "high,normal"}) +
      row({"c1", "  theory", "", "", "5", "", "20", "cpu=100", "", "", "", "", "2-00:00:00", "high"}) +
      row({"c1", "   theory", "carol", "", "parent", "", "", "", "", "4"}) +
      row({"c1", " chem", "", "", "1", "", "", "", "", "", "", "", "", "normal", "normal"}) +
      row({"c1", "  chem", "dave", "p1", "3", "", "", "", "", "", "", "", "", "", "", "cpu=60"}) +
      row({"c2", "other", "", "", "1"});
  Site s;
  std::vector<std::string> w;
  import_qos_table_text("Name|Priority|\nnormal|0|\nhigh|10|\n", "qos.txt", s, w);
  import_assoc_dump_text(dump, "assoc.txt", s, w);
  REQUIRE(s.accounts.size() == 4);
  CHECK(s.find_account("root")->parent.empty());
  CHECK(s.find_account("root")->qos == std::vector<std::string>{"normal"});
  CHECK(s.find_account("physics")->parent == "root");
  CHECK(s.find_account("physics")->shares == Shares{10, false});
  CHECK(s.find_account("physics")->qos == std::vector<std::string>{"high", "normal"});
  const auto& theory = *s.find_account("theory");
  CHECK(theory.parent == "physics");
  CHECK(theory.shares == Shares{5, false});
  CHECK(theory.limits.grp_jobs == 20);
  CHECK(theory.limits.grp_tres == TresMap{{"cpu", 100}});
  CHECK(theory.limits.max_wall == 2 * 86400);
  CHECK(s.find_account("chem")->parent == "root");
  CHECK(s.find_account("chem")->default_qos == "normal");
  REQUIRE(s.associations.size() == 3);
  CHECK(find_assoc(s, "carol", "theory")->shares.parent);
  CHECK(find_assoc(s, "carol", "theory")->limits.max_jobs_per_user == 4);
  CHECK(find_assoc(s, "dave", "chem")->partition == "p1");
  CHECK(find_assoc(s, "dave", "chem")->shares == Shares{3, false});
  CHECK(s.find_user("carol")->default_account == "theory");
  CHECK(s.qos.size() == 2);
  CHECK(s.find_qos("high")->priority == 10);
  CHECK(count_containing(w, "several clusters") == 1);
  CHECK(find_assoc(s, "dave", "chem")->limits.grp_tres_mins == TresMap{{"cpu", 60}});
  CHECK(count_containing(w, "column GrpTRESMins") == 0);  // read, and enforced (test_limits.cpp)
  CHECK_NOTHROW(validate(s));

  // Fail closed: a QOS the site does not define is not made up with priority 0 and no limits.
  const auto no_qos = input_error([&] {
    Site x;
    std::vector<std::string> w4;
    import_assoc_dump_text(dump, "assoc.txt", x, w4);
  });
  CHECK(no_qos ==
        "assoc.txt:2: QOS: the associations name QOS the site does not define: high,normal (give them with "
        "--qos-dump, the output of `sacctmgr -P show qos`)");

  // flat output with a Par Name column
  const std::string flat =
      "Account|User|Par Name|Share|QOS\n"
      "root|||1|normal\n"
      "b||a|2|\n"
      "a||root|1|\n"
      "b|erin||parent|\n";
  Site f;
  std::vector<std::string> w2;
  import_qos_table_text("Name\nnormal\n", "qos.txt", f, w2);
  import_assoc_dump_text(flat, "flat.txt", f, w2);
  CHECK(f.find_account("b")->parent == "a");
  CHECK(f.find_account("a")->parent == "root");
  CHECK_NOTHROW(validate(f));

  // Slurm 23.11+ gives the tree as Lineage instead ("/a/b/" for account b under a)
  const std::string lineage =
      "Account|User|Lineage|Share\n"
      "root|||1\n"
      "a|||1\n"
      "b||/a/b/|2\n"
      "b|erin|/a/b/0-erin/|1\n";
  Site g;
  std::vector<std::string> w5;
  import_assoc_dump_text(lineage, "lineage.txt", g, w5);
  CHECK(g.find_account("b")->parent == "a");
  CHECK(g.find_account("a")->parent == "root");
  CHECK(find_assoc(g, "erin", "b") != nullptr);
  const auto msg = input_error([] {
    Site x;
    std::vector<std::string> w3;
    import_assoc_dump_text("Account|User|Share\nroot||1\nghost|zed|1\n", "g.txt", x, w3);
  });
  CHECK(msg == "g.txt:3: Account: account 'ghost' has no account row");
}

// ---------------------------------------------------------------------------------------------------- YAML

TEST_CASE("ub_medium round-trips through site YAML unchanged, with nodes grouped by hostlist") {
  Site s;
  std::vector<std::string> warnings;
  if (!import_ub_medium(s, warnings)) return;
  const auto yaml = site_to_yaml(s);
  CHECK(yaml.find("names: n[001-087]") != std::string::npos);
  CHECK(yaml.find("names: g[001-008]") != std::string::npos);
  CHECK(yaml.find("bf_window_s: 259200") != std::string::npos);
  const Site back = parse_site_yaml(yaml, "ub.yaml");
  CHECK(back.nodes == s.nodes);
  CHECK(back.partitions == s.partitions);
  CHECK(back.qos == s.qos);
  CHECK(back.accounts == s.accounts);
  CHECK(back.associations == s.associations);
  CHECK(back.users == s.users);
  CHECK(back.scheduler == s.scheduler);
  CHECK(back == s);

  const auto dir = testing::scratch_dir("site_yaml");
  save_site_yaml(s, (dir / "site.yaml").string());
  CHECK(load_site_yaml((dir / "site.yaml").string()) == s);
}

TEST_CASE("one settings table: slurm.conf, the site YAML and code refuse the same out-of-range values") {
  // slurmctld 22.05 refuses bf_max_job_test=0 (it would test no job: backfill off); the site YAML
  // and sweeps took it silently before the table (0..2^32-1 there).
  const auto conf = [](const std::string& text) {
    return input_error([&] {
      std::vector<std::string> w;
      import_slurm_conf_text(text, "s.conf", w);
    });
  };
  const auto yaml = [](const std::string& params) {
    return input_error(
        [&] { parse_site_yaml("scheduler:\n  scheduler_parameters: {" + params + "}\n", "s.yaml"); });
  };
  CHECK(
      conf("SchedulerParameters=bf_max_job_test=0\n") ==
      "s.conf:1: SchedulerParameters: SchedulerParameters option bf_max_job_test=0 is not an integer in [1, "
      "1000000]");
  CHECK(yaml("bf_max_job_test: 0") == "s.yaml:2: bf_max_job_test: 0 is outside [1, 1000000]");
  CHECK(yaml("bf_max_job_test: 1") == "");
  // bf_window: minutes in slurm.conf, seconds in the YAML; the same bounds (1 min to 30 days).
  CHECK(conf("SchedulerParameters=bf_window=43201\n").find("[1, 43200]") != std::string::npos);
  CHECK(yaml("bf_window_s: 2592060") == "s.yaml:2: bf_window_s: 2592060 s is outside [60 s, 2592000 s]");
  CHECK(yaml("bf_window_s: 2592000") == "");
  // A "not given" value the YAML writer emits for a default site (bf_max_time 0: bf_interval) reads
  // back; slurm.conf cannot write it.
  CHECK(yaml("bf_max_time_s: 0") == "");
  CHECK(conf("SchedulerParameters=bf_max_time=0\n").find("[1, 3600]") != std::string::npos);
  CHECK(input_error([] { parse_site_yaml("scheduler:\n  priority_calc_period_s: 30\n", "s.yaml"); }) ==
        "s.yaml:2: priority_calc_period_s: 30 s is outside [60 s, 4294967295 s]");
  CHECK(conf("PriorityCalcPeriod=0:30\n") ==
        "s.conf:1: PriorityCalcPeriod: 30 s is outside [60 s, 4294967295 s]");
  // A site built in code is held to the same bounds when validated.
  Site site;
  site.scheduler.params.bf_resolution = 0;
  CHECK_THROWS_WITH_AS(validate(site), "bf_resolution: 0 is outside [1, 3600]", std::invalid_argument);
  // Every setting of the default SchedulerSettings is in bounds and found by its names.
  const SchedulerSettings defaults;
  CHECK_NOTHROW(check_site_settings(defaults));
  for (const auto& st : site_settings()) {
    CAPTURE(st.name);
    CHECK(find_site_setting(st.name) == &st);
    CHECK(find_site_setting_yaml(st.yaml_key, st.scheduler_parameter) == &st);
  }
  // Units as slurm.conf writes the values (slurm.conf(5): bf_window in minutes, sched_min_interval in
  // microseconds, PriorityMaxAge and bf_interval in seconds; the weights are plain integers).
  const auto unit = [](std::string_view name) { return setting_unit(*find_site_setting(name)); };
  CHECK(unit("bf_window") == "min");
  CHECK(unit("sched_min_interval") == "µs");
  CHECK(unit("PriorityMaxAge") == "s");
  CHECK(unit("bf_interval") == "s");
  CHECK(unit("PriorityWeightFairshare") == "");
  CHECK(unit("bf_max_job_test") == "");
  CHECK(unit("PriorityFavorSmall") == "on/off");
}

TEST_CASE("site YAML round-trips hand-made edge values: unset and unlimited times, limits, odd names") {
  Site s;
  s.cluster_name = "edge";
  Node a;
  a.name = "x1";
  a.gres = {{"gpu", "", 3}, {"gpu", "a100", 1}};
  s.nodes.push_back(a);
  a.name = "x3";  // x1, x3, x2: written as one group in this order, read back as x1, x2, x3
  s.nodes.push_back(a);
  a.name = "x2";
  s.nodes.push_back(a);
  a.name = "odd:name";
  a.weight = 7;
  s.nodes.push_back(a);
  Partition p;
  p.name = "p";
  p.nodes = {"x1", "x2"};
  p.default_time = kUnsetTime;
  p.max_time = kUnlimited;
  p.oversubscribe = OverSubscribe::kForce;
  p.oversubscribe_count = 4;
  p.preempt_mode = PreemptMode::kSuspendGang;
  p.over_time_limit = kUnlimited;
  p.tres_billing_weights = {{"cpu", 0.1}, {"mem", 1.0 / 3}};
  s.partitions.push_back(p);
  Qos q;
  q.name = "yes";  // a name YAML would read as a boolean
  q.usage_factor = 0.1;
  q.limits.max_wall = 3600;
  q.limits.grp_jobs = 0;
  q.limits.grp_jobs_accrue = 0;  // a limit of 0 is a limit, not "unset"
  q.limits.max_jobs_accrue_per_user = 2;
  q.limits.max_jobs_accrue_per_account = 3;
  q.preempt_exempt_time = 0;
  q.flags = {"NoDecay"};
  s.qos.push_back(q);
  Account root;
  root.name = "root";
  root.parent = "";
  root.qos = {"yes"};
  s.accounts.push_back(root);
  UserAssoc u;
  u.user = "123";
  u.account = "root";
  u.shares = {1, true};
  u.limits.max_jobs_accrue_per_user = 1;
  s.associations.push_back(u);
  s.users.push_back({"123", "root", "None"});
  s.scheduler.params.other["bf_licenses"] = "";
  s.scheduler.params.bf_interval = -1;
  const Site back = parse_site_yaml(site_to_yaml(s), "edge.yaml");
  // Read back in slurmctld's node order (odd:name, x1, x2, x3), everything else as written.
  CHECK(back != s);
  Site ordered = s;
  order_nodes_as_slurmctld(ordered);
  CHECK(back == ordered);
  CHECK(back.nodes.front().name == "odd:name");
}

TEST_CASE("site YAML loading reports unknown keys, bad types and invalid sites with the line") {
  const auto err = [](const std::string& yaml) {
    return input_error([&] { parse_site_yaml(yaml, "s.yaml"); });
  };
  CHECK(err("cluster_name: a\nnodes:\n  - names: n1\n    cpu: 4\n") == "s.yaml:4: cpu: unknown key in nodes");
  CHECK(err("nodes:\n  - names: n1\n    cpus: four\n") == "s.yaml:3: cpus: 'four' is not an integer");
  CHECK(err("nodes:\n  - names: n1\n    cpus: 0\n") == "s.yaml:3: cpus: 0 is outside [1, 4294967295]");
  CHECK(err("partitions:\n  - name: p\n    default: maybe\n") ==
        "s.yaml:3: default: 'maybe' is not true or false");
  CHECK(err("partitions:\n  - nodes: n1\n").rfind("s.yaml:2: name: missing required key", 0) == 0);
  CHECK(err("qos:\n  - name: q\n    limits: {max_wall_s: [1]}\n") ==
        "s.yaml:3: max_wall_s: expected a scalar");
  CHECK(err("bogus: 1\n") == "s.yaml:1: bogus: unknown key in site");
  CHECK(err("nodes: [\n").rfind("s.yaml:", 0) == 0);
  CHECK(err("nodes:\n  - names: n1\npartitions:\n  - name: p\n    nodes: n2\n") ==
        "s.yaml: invalid site: partition 'p': unknown node 'n2'");
}

TEST_CASE("limits read but not enforced are named: other TRES, and all without enforce=limits") {
  // QOS and association TRES limits count cpu, mem, node, gres/gpu and billing; a license or another
  // GRES is kept in the site but checked by nothing, so the import (and a replay of the YAML) says so.
  Site s;
  s.scheduler.accounting_storage_enforce = {"associations", "limits"};
  Qos q;
  q.name = "b";
  q.limits.grp_tres = {{"billing", 100}, {"cpu", 8}};
  s.qos.push_back(q);
  Account a;
  a.name = "root";
  a.parent = "";
  a.limits.max_tres_per_job = {{"license/matlab", 2}};
  s.accounts.push_back(a);
  UserAssoc u;
  u.user = "u";
  u.account = "root";
  u.limits.grp_tres = {{"gres/tmpdisk", 5}};
  s.associations.push_back(u);
  auto w = unenforced_limits(s);
  REQUIRE(w.size() == 1);
  CHECK(w[0] ==
        "limits on TRES gres/tmpdisk, license/matlab (account root, 1 user association(s)) are "
        "read but not enforced: the replay counts cpu, mem, node, gres/gpu, billing only");
  s.qos[0].limits.grp_tres = {{"cpu", 8}};
  s.accounts[0].limits = {};
  s.associations[0].limits = {};
  CHECK(unenforced_limits(s).empty());
  // Without AccountingStorageEnforce=limits none is enforced, by Slurm or the replay: one warning.
  s.scheduler.accounting_storage_enforce = {"associations"};
  w = unenforced_limits(s);
  REQUIRE(w.size() == 1);
  CHECK(w[0].find("limits are set (QOS b) but AccountingStorageEnforce lacks 'limits'") == 0);
}
