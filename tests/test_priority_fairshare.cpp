// Multifactor priority, usage decay/charging and fair share (Fair Tree, Classic) against values
// worked out by hand from slurm-scheduling-spec.md §2-§3; the arithmetic is in the comments.
#include <doctest/doctest.h>

#include <cfloat>
#include <cmath>
#include <stdexcept>
#include <string>

#include "policies/assoc_tree.hpp"
#include "policies/fair_tree.hpp"
#include "policies/priority.hpp"
#include "policies/usage.hpp"
#include "traces/site.hpp"

using namespace slurmtwin;
using namespace slurmtwin::policies;

namespace {

constexpr double kEps = 1e-12;

doctest::Approx near(double v) {
  return doctest::Approx(v).epsilon(kEps);
}

Node make_node(const std::string& name, std::uint32_t cpus, std::int64_t mem_mb, std::int64_t gpus) {
  Node n;
  n.name = name;
  n.cpus = cpus;
  n.real_memory_mb = mem_mb;
  if (gpus > 0) n.gres.push_back({"gpu", "a100", gpus});
  return n;
}

/// 4 nodes x 8 CPUs x 1000 MB (N = 4, C = 32); n3, n4 have 2 GPUs each.
/// Partitions: batch (all nodes, PriorityJobFactor 1, MaxTime 1 day), high (n3-n4, factor 4, 2 h),
/// zero (n1, factor 0). QOS: normal (0), high (100), low (25).
Site priority_site() {
  Site s;
  s.nodes = {make_node("n1", 8, 1000, 0), make_node("n2", 8, 1000, 0), make_node("n3", 8, 1000, 2),
             make_node("n4", 8, 1000, 2)};
  Partition batch;
  batch.name = "batch";
  batch.nodes = {"n1", "n2", "n3", "n4"};
  batch.max_time = 86400;
  Partition high;
  high.name = "high";
  high.nodes = {"n3", "n4"};
  high.priority_job_factor = 4;
  high.max_time = 7200;
  Partition zero;
  zero.name = "zero";
  zero.nodes = {"n1"};
  zero.priority_job_factor = 0;
  s.partitions = {batch, high, zero};
  Qos normal;
  normal.name = "normal";
  Qos qhigh;
  qhigh.name = "high";
  qhigh.priority = 100;
  Qos low;
  low.name = "low";
  low.priority = 25;
  s.qos = {normal, qhigh, low};
  Account root;
  root.name = "root";
  root.parent = "";
  Account phys;
  phys.name = "phys";
  phys.priority = 50;
  s.accounts = {root, phys};
  UserAssoc alice;  // Priority unset -> inherits 50 from phys
  alice.user = "alice";
  alice.account = "phys";
  UserAssoc bob;
  bob.user = "bob";
  bob.account = "phys";
  bob.priority = 200;
  s.associations = {alice, bob};
  return s;
}

/// Scheduler settings with every priority weight 0 (tests then switch on the one they check).
SchedulerSettings zero_weights() {
  SchedulerSettings st;
  st.weight_age = st.weight_assoc = st.weight_fairshare = st.weight_job_size = st.weight_partition =
      st.weight_qos = 0;
  return st;
}

PriorityInput base_input() {
  PriorityInput in;
  in.now = 100000;
  in.partition = 0;
  return in;
}

}  // namespace

TEST_CASE("priority flags parse with FAIR_TREE default, NO_NORMAL_ALL and DEPTH_OBLIVIOUS") {
  const auto def = PriorityFlags::parse({"FAIR_TREE"});
  CHECK(def.fair_tree);
  CHECK_FALSE(def.no_normal_qos);
  const auto all = PriorityFlags::parse({"NO_NORMAL_ALL", "accrue_always"});
  CHECK(all.no_normal_assoc);
  CHECK(all.no_normal_part);
  CHECK(all.no_normal_qos);
  CHECK(all.no_normal_tres);
  CHECK(all.accrue_always);
  CHECK(all.fair_tree);  // FAIR_TREE is on unless cleared
  CHECK_FALSE(PriorityFlags::parse({"DEPTH_OBLIVIOUS"}).fair_tree);
  CHECK_FALSE(PriorityFlags::parse({"NO_FAIR_TREE"}).fair_tree);
}

TEST_CASE("PriorityModel precomputes cluster size, maxima and partition TRES totals") {
  const PriorityModel m(priority_site(), zero_weights());
  CHECK(m.cluster_nodes() == 4);
  CHECK(m.cluster_cpus() == 32);
  CHECK(m.max_partition_factor() == 4);
  CHECK(m.max_qos_priority() == 100);
  CHECK(m.max_assoc_priority() == 200);
  CHECK(m.partition_tres(0).at("cpu") == 32);
  CHECK(m.partition_tres(0).at("mem") == 4000);
  CHECK(m.partition_tres(0).at("node") == 4);
  CHECK(m.partition_tres(0).at("gres/gpu") == 4);
  CHECK(m.partition_tres(0).at("gres/gpu:a100") == 4);
  CHECK(m.partition_tres(1).at("cpu") == 16);
}

TEST_CASE("all weights zero clamps every priority to 1") {
  const PriorityModel m(priority_site(), zero_weights());
  auto in = base_input();
  in.accrue_time = 0;
  in.fs_factor = 1.0;
  in.qos = 1;
  const auto f = m.compute(in);
  CHECK(f.sum == 0.0);
  CHECK(f.priority == 1);
  in.nice = 500;  // 0 - 500 = -500 -> still 1, never 0 (held)
  CHECK(m.compute(in).priority == 1);
}

TEST_CASE("age factor grows linearly to PriorityMaxAge then stays 1") {
  auto st = zero_weights();
  st.weight_age = 1000;
  st.max_age = 1000;
  const PriorityModel m(priority_site(), st);
  auto in = base_input();
  SUBCASE("below max age") {
    in.accrue_time = in.now - 250;  // 250/1000 = 0.25 -> 0.25*1000 = 250
    const auto f = m.compute(in);
    CHECK(f.age == near(0.25));
    CHECK(f.weighted_age == near(250.0));
    CHECK(f.priority == 250);
  }
  SUBCASE("above max age") {
    in.accrue_time = in.now - 2000;  // 2000 >= 1000 -> 1.0 -> 1000
    CHECK(m.compute(in).age == 1.0);
    CHECK(m.compute(in).priority == 1000);
  }
  SUBCASE("not accruing or accruing in the future") {
    CHECK(m.compute(in).age == 0.0);  // accrue_time unset
    in.accrue_time = in.now + 50;     // diff = max(0, -50) = 0
    CHECK(m.compute(in).age == 0.0);
    CHECK(m.compute(in).priority == 1);
  }
}

TEST_CASE("accrue time is submit with ACCRUE_ALWAYS, else the passed eligible time") {
  const auto plain = PriorityFlags::parse({"FAIR_TREE"});
  const auto always = PriorityFlags::parse({"ACCRUE_ALWAYS"});
  CHECK(accrue_time(always, 100, 500, 200) == 100);
  CHECK(accrue_time(plain, 100, 150, 200) == 150);
  CHECK(accrue_time(plain, 100, 500, 200) == kUnsetTime);  // begin time in the future
  CHECK(accrue_time(plain, 100, kUnsetTime, 200) == kUnsetTime);
}

TEST_CASE("job size factor favours large jobs by default") {
  auto st = zero_weights();
  st.weight_job_size = 1000;
  const PriorityModel m(priority_site(), st);
  auto in = base_input();
  in.min_nodes = 1;
  in.cpu_count = 8;  // (1/4 + 8/32) / 2 = 0.25 -> 250
  CHECK(m.compute(in).job_size == near(0.25));
  CHECK(m.compute(in).priority == 250);
  in.cpu_count = 0;  // no CPU count: 1/4 = 0.25
  CHECK(m.compute(in).job_size == near(0.25));
  in.min_nodes = 2;
  in.cpu_count = 4;  // (2/4 + 4/32) / 2 = (0.5 + 0.125) / 2 = 0.3125 -> 312.5 -> truncated 312
  const auto f = m.compute(in);
  CHECK(f.job_size == near(0.3125));
  CHECK(f.sum == near(312.5));
  CHECK(f.priority == 312);
}

TEST_CASE("job size factor with PriorityFavorSmall") {
  auto st = zero_weights();
  st.weight_job_size = 1000;
  st.favor_small = true;
  const PriorityModel m(priority_site(), st);
  auto in = base_input();
  in.min_nodes = 1;
  in.cpu_count = 8;  // ((4-1)/4 + (32-8)/32) / 2 = (0.75 + 0.75) / 2 = 0.75 -> 750
  CHECK(m.compute(in).job_size == near(0.75));
  CHECK(m.compute(in).priority == 750);
  in.min_nodes = 4;
  in.cpu_count = 32;  // (0 + 0) / 2 = 0 -> clamped to priority 1
  CHECK(m.compute(in).job_size == 0.0);
  CHECK(m.compute(in).priority == 1);
  in.min_nodes = 5;  // more nodes than the cluster: node part 0, no CPU count -> 0
  in.cpu_count = 0;
  CHECK(m.compute(in).job_size == 0.0);
}

TEST_CASE("job size factor with SMALL_RELATIVE_TO_TIME") {
  auto st = zero_weights();
  st.weight_job_size = 100000;
  st.priority_flags = {"FAIR_TREE", "SMALL_RELATIVE_TO_TIME"};
  auto in = base_input();
  in.min_nodes = 1;
  in.cpu_count = 4;  // size = max(1*32/4, 4) = 8 CPUs
  SUBCASE("favor large") {
    const PriorityModel m(priority_site(), st);
    in.time_limit = 3600;  // 60 min: 8/60/32 = 0.0041667 -> 416.67 -> 416
    CHECK(m.compute(in).job_size == near(8.0 / 60.0 / 32.0));
    CHECK(m.compute(in).priority == 416);
    in.time_limit = 90;  // rounds up to 2 min: 8/2/32 = 0.125 -> 12500
    CHECK(m.compute(in).priority == 12500);
    in.time_limit = kUnsetTime;  // batch MaxTime 1 day = 1440 min: 8/1440/32*1e5 = 17.36 -> 17
    CHECK(m.compute(in).priority == 17);
    in.time_limit = kUnlimited;  // same rule
    CHECK(m.compute(in).priority == 17);
  }
  SUBCASE("favor small") {
    st.favor_small = true;
    const PriorityModel m(priority_site(), st);
    in.time_limit = 3600;  // (1 - 8/60/32) * 1e5 = 99583.33 -> 99583
    CHECK(m.compute(in).job_size == near(1.0 - 8.0 / 60.0 / 32.0));
    CHECK(m.compute(in).priority == 99583);
  }
}

TEST_CASE("partition factor is normalized to the largest PriorityJobFactor unless NO_NORMAL_PART") {
  auto st = zero_weights();
  st.weight_partition = 1000;
  auto in = base_input();
  SUBCASE("normalized") {
    const PriorityModel m(priority_site(), st);
    CHECK(m.compute(in).partition == near(0.25));  // batch: 1/4 -> 250
    CHECK(m.compute(in).priority == 250);
    in.partition = 1;  // high: 4/4 -> 1000
    CHECK(m.compute(in).priority == 1000);
    in.partition = 2;  // factor 0 -> not applied
    CHECK(m.compute(in).partition == 0.0);
    CHECK(m.compute(in).priority == 1);
  }
  SUBCASE("NO_NORMAL_PART") {
    st.priority_flags = {"NO_NORMAL_PART"};
    const PriorityModel m(priority_site(), st);
    CHECK(m.compute(in).priority == 1000);  // raw 1 * 1000
    in.partition = 1;
    CHECK(m.compute(in).partition == 4.0);  // raw 4 * 1000 = 4000
    CHECK(m.compute(in).priority == 4000);
  }
}

TEST_CASE("QOS and association factors are normalized to the global maxima unless NO_NORMAL_*") {
  auto st = zero_weights();
  st.weight_qos = 1000;
  st.weight_assoc = 1000;
  auto in = base_input();
  in.qos = 2;              // low: 25/100 = 0.25 -> 250
  in.assoc_priority = 50;  // alice (inherited): 50/200 = 0.25 -> 250
  SUBCASE("normalized") {
    const PriorityModel m(priority_site(), st);
    const auto f = m.compute(in);
    CHECK(f.qos == near(0.25));
    CHECK(f.assoc == near(0.25));
    CHECK(f.priority == 500);
    in.qos = 0;  // normal has priority 0 -> factor 0; 0 + 250
    CHECK(m.compute(in).priority == 250);
  }
  SUBCASE("NO_NORMAL_QOS and NO_NORMAL_ASSOC") {
    st.priority_flags = {"NO_NORMAL_QOS", "NO_NORMAL_ASSOC"};
    const PriorityModel m(priority_site(), st);
    const auto f = m.compute(in);
    CHECK(f.qos == 25.0);    // 25 * 1000 = 25000
    CHECK(f.assoc == 50.0);  // 50 * 1000 = 50000
    CHECK(f.priority == 75000);
  }
  SUBCASE("association priorities inherit and set the maximum") {
    const AssocTree tree(priority_site());
    CHECK(tree.node(tree.user_assoc("alice", "phys")).priority == 50);
    CHECK(tree.node(tree.user_assoc("bob", "phys")).priority == 200);
    CHECK(tree.max_priority() == 200);
  }
}

TEST_CASE("TRES factor with the ub_medium weights and NO_NORMAL_TRES") {
  auto st = zero_weights();
  st.weight_tres = {{"cpu", 0.0}, {"mem", 0.03}, {"gres/gpu", 30000.0}};
  st.priority_flags = {"NO_NORMAL_TRES"};
  const PriorityModel m(priority_site(), st);
  auto in = base_input();
  in.tres = {{"cpu", 16}, {"mem", 4000}, {"gres/gpu", 2}};
  // cpu 16*0 = 0; mem 4000 MB * 0.03 = 120; gpu 2 * 30000 = 60000; total 60120.
  const auto f = m.compute(in);
  CHECK(f.tres.at("mem") == 4000.0);
  CHECK(f.weighted_tres.at("cpu") == 0.0);
  CHECK(f.weighted_tres.at("mem") == near(120.0));
  CHECK(f.weighted_tres.at("gres/gpu") == 60000.0);
  CHECK(f.priority == 60120);
}

TEST_CASE("TRES factor normalized to the partition's TRES totals") {
  auto st = zero_weights();
  st.weight_tres = parse_tres_weights("CPU=1000,Mem=2000,GRES/gpu=3000");
  const PriorityModel m(priority_site(), st);
  auto in = base_input();
  in.tres = {{"cpu", 16}, {"mem", 1000}, {"gres/gpu", 2}};
  // batch totals cpu 32, mem 4000, gpu 4: 16/32*1000 + 1000/4000*2000 + 2/4*3000 = 500+500+1500
  CHECK(m.compute(in).weighted_tres_sum == near(2500.0));
  CHECK(m.compute(in).priority == 2500);
  in.partition = 1;  // high: cpu 16, mem 2000, gpu 4: 1000 + 1000 + 1500 = 3500
  CHECK(m.compute(in).priority == 3500);
  in.partition = 2;  // zero: n1 has no GPU -> gpu total 0 -> factor 0; cpu 16/8 = 2 -> 2000;
                     // mem 1000/1000 = 1 -> 2000; total 4000 (factors are not capped at 1)
  CHECK(m.compute(in).tres.at("gres/gpu") == 0.0);
  CHECK(m.compute(in).priority == 4000);
}

TEST_CASE("priority sums every term, adds site factor, subtracts nice and clamps to 2^32-1") {
  auto st = zero_weights();
  st.weight_age = 1000;
  st.max_age = 1000;
  st.weight_partition = 1000;
  st.weight_fairshare = 10000;
  const PriorityModel m(priority_site(), st);
  auto in = base_input();
  in.accrue_time = in.now - 100;  // age 0.1 -> 100
  in.fs_factor = 4.0 / 7.0;       // 10000 * 4/7 = 5714.2857
  in.site_factor = 7;
  in.nice = 3;
  // 100 + 250 (batch) + 5714.2857 + 7 - 3 = 6068.2857 -> 6068
  const auto f = m.compute(in);
  CHECK(f.weighted_fairshare == near(10000.0 * 4.0 / 7.0));
  CHECK(f.sum == near(100.0 + 250.0 + 10000.0 * 4.0 / 7.0 + 4.0));
  CHECK(f.priority == 6068);

  auto big = zero_weights();
  big.weight_qos = 4294967295u;
  big.priority_flags = {"NO_NORMAL_QOS"};
  const PriorityModel mb(priority_site(), big);
  in = base_input();
  in.qos = 1;  // 100 * (2^32-1) > 2^32-1 -> clamped
  CHECK(mb.compute(in).priority == 4294967295u);
}

// ---------------------------------------------------------------------------------------------
// Usage: decay, charging, billing, resets.

namespace {

/// root -> acct (shares 1) -> u1; QOS normal (decays), pq (NoDecay, used as partition QOS),
/// high (UsageFactor 2).
Site usage_site() {
  Site s;
  Account root;
  root.name = "root";
  root.parent = "";
  Account acct;
  acct.name = "acct";
  s.accounts = {root, acct};
  UserAssoc u1;
  u1.user = "u1";
  u1.account = "acct";
  s.associations = {u1};
  Qos normal;
  normal.name = "normal";
  Qos pq;
  pq.name = "pq";
  pq.flags = {"NoDecay"};
  Qos high;
  high.name = "high";
  high.usage_factor = 2.0;
  s.qos = {normal, pq, high};
  return s;
}

}  // namespace

TEST_CASE("decay factor per second and decay over one and several periods") {
  const UsageDecay d(60);
  CHECK(d.per_second() == near(1.0 - 0.693 / 60.0));  // 0.98845
  // 0.98845^60 = exp(60 * ln 0.98845) = 0.4980607803987...
  CHECK(d.factor(60) == near(0.49806078039872287));
  CHECK(UsageDecay(0).per_second() == 1.0);

  const Site s = usage_site();
  AssocTree tree(s);
  auto qos = make_qos_usage(s);
  CHECK(qos[1].no_decay);
  const AssocIndex u1 = tree.user_assoc("u1", "acct");
  tree.add_usage(u1, 1000.0, 10.0);
  qos[0].usage_raw = 1000.0;
  qos[1].usage_raw = 1000.0;
  CHECK(tree.node(tree.root()).usage_raw == 1000.0);

  d.decay(tree, qos, 30);
  d.decay(tree, qos, 30);  // two 30 s periods = one 60 s period: 1000 * 0.98845^60 = 498.0608
  CHECK(tree.node(u1).usage_raw == near(498.06078039872284));
  CHECK(tree.node(tree.account("acct")).usage_raw == near(498.06078039872284));
  CHECK(tree.node(tree.root()).usage_raw == near(498.06078039872284));
  CHECK(tree.node(u1).grp_used_wall == near(4.9806078039872284));
  CHECK(qos[0].usage_raw == near(498.06078039872284));
  CHECK(qos[1].usage_raw == 1000.0);  // NoDecay

  d.decay(tree, qos, 0);  // no time passed: unchanged
  CHECK(tree.node(u1).usage_raw == near(498.06078039872284));
  // A huge gap floors the factor at DBL_MIN instead of 0.
  d.decay(tree, qos, 1'000'000'000);
  CHECK(tree.node(u1).usage_raw == near(498.06078039872284 * DBL_MIN));
  CHECK(tree.node(u1).usage_raw > 0.0);
}

TEST_CASE("billable TRES: CPUs without weights, weighted sum, MAX_TRES and MAX_TRES_GRES") {
  const TresMap alloc{{"cpu", 4}, {"mem", 8192}, {"node", 1}, {"gres/gpu", 1}};
  const TresWeights w = parse_tres_weights("CPU=1.0,Mem=0.25G,GRES/gpu=2");
  CHECK(billable_tres(alloc, {}, BillingMode::kSum) == 4.0);  // allocated CPUs
  // 4*1 + 8192*(0.25/1024) + 1*2 = 4 + 2 + 2 = 8 (node has no weight)
  CHECK(billable_tres(alloc, w, BillingMode::kSum) == near(8.0));
  // MAX(4, 2, 2) = 4
  CHECK(billable_tres(alloc, w, BillingMode::kMaxTres) == near(4.0));
  // MAX(cpu 4, mem 2) + gpu 2 = 6
  CHECK(billable_tres(alloc, w, BillingMode::kMaxTresGres) == near(6.0));
  CHECK(billing_mode({"MAX_TRES"}) == BillingMode::kMaxTres);
  CHECK(billing_mode({"MAX_TRES", "MAX_TRES_GRES"}) == BillingMode::kMaxTresGres);
  CHECK(billing_mode({"FAIR_TREE"}) == BillingMode::kSum);
}

TEST_CASE("charge_slice charges pre-decayed billing-seconds with UsageFactor up to root") {
  const Site s = usage_site();
  AssocTree tree(s);
  auto qos = make_qos_usage(s);
  const UsageDecay d(60);
  ChargedJob job;
  job.assoc = tree.user_assoc("u1", "acct");
  job.qos = 2;            // high, UsageFactor 2
  job.partition_qos = 1;  // pq, NoDecay
  job.start = 100;
  job.end = 150;
  job.billing = billable_tres({{"cpu", 4}, {"mem", 8192}, {"gres/gpu", 1}},
                              parse_tres_weights("CPU=1.0,Mem=0.25G,GRES/gpu=2"), BillingMode::kSum);
  job.usage_factor = 2.0;
  REQUIRE(job.billing == near(8.0));

  // Slice [90, 130]: a = max(90, 100) = 100, delta 30; w = 30 * 0.98845^30 * 2 = 42.344052822508644;
  // U = w * 8 = 338.75242258006915.
  const auto c = d.charge_slice(tree, qos, job, 90, 130, /*at_end=*/false);
  CHECK(c.delta == 30);
  CHECK(c.usage == near(338.75242258006915));
  CHECK(tree.node(job.assoc).usage_raw == near(338.75242258006915));
  CHECK(tree.node(tree.account("acct")).usage_raw == near(338.75242258006915));
  CHECK(tree.node(tree.root()).usage_raw == near(338.75242258006915));
  CHECK(tree.node(job.assoc).grp_used_wall == near(2.0 * 21.172026411254322));
  CHECK(qos[2].usage_raw == near(338.75242258006915));
  CHECK(qos[1].usage_raw == near(30.0 * 8.0 * 2.0));  // NoDecay partition QOS: 480 undecayed
  CHECK(qos[0].usage_raw == 0.0);

  // Final slice at job end: [130, 200] capped at end 150 -> delta 20;
  // 20 * 0.98845^20 * 8 * 2 = 253.65538884572499.
  const auto e = d.charge_slice(tree, qos, job, 130, 200, /*at_end=*/true);
  CHECK(e.delta == 20);
  CHECK(e.usage == near(253.65538884572499));
  CHECK(tree.node(tree.root()).usage_raw == near(338.75242258006915 + 253.65538884572499));

  // A negative UsageFactor is not applied (factor 1).
  job.usage_factor = -1.0;
  const auto n = d.charge_slice(tree, qos, job, 130, 150, false);
  CHECK(n.usage == near(20.0 * std::pow(1.0 - 0.693 / 60.0, 20.0) * 8.0));
}

TEST_CASE("usage reset boundaries are UTC day, Sunday, month, quarter and year starts") {
  using P = UsageResetPeriod;
  CHECK(parse_usage_reset_period("weekly") == P::kWeekly);
  CHECK_THROWS_AS(parse_usage_reset_period("hourly"), std::invalid_argument);
  // 2024-01-01T23:00 (1704150000) -> next midnight 2024-01-02T00:00 (1704153600)
  CHECK(next_usage_reset(P::kDaily, 1704150000) == 1704153600);
  CHECK(usage_reset_due(P::kDaily, 1704150000, 1704153600));
  CHECK_FALSE(usage_reset_due(P::kDaily, 1704150000, 1704153599));
  // Saturday 2024-01-06T10:00 (1704535200) -> Sunday 2024-01-07T00:00 (1704585600)
  CHECK(next_usage_reset(P::kWeekly, 1704535200) == 1704585600);
  // Sunday 2024-01-07T05:00 -> the following Sunday 2024-01-14 (1705190400)
  CHECK(next_usage_reset(P::kWeekly, 1704603600) == 1705190400);
  // 2024-01-31T12:00 -> 2024-02-01 (1706745600)
  CHECK(next_usage_reset(P::kMonthly, 1706702400) == 1706745600);
  // 2024-05-15 -> 2024-07-01 (1719792000); 2024-11-02 -> 2025-01-01 (1735689600)
  CHECK(next_usage_reset(P::kQuarterly, 1715731200) == 1719792000);
  CHECK(next_usage_reset(P::kQuarterly, 1730505600) == 1735689600);
  CHECK(next_usage_reset(P::kYearly, 1715731200) == 1735689600);
  CHECK_FALSE(usage_reset_due(P::kNone, 0, 1735689600));
  CHECK(usage_reset_due(P::kNow, kUnsetTime, 100));  // only at the first decay run
  CHECK_FALSE(usage_reset_due(P::kNow, 50, 100));

  const Site s = usage_site();
  AssocTree tree(s);
  auto qos = make_qos_usage(s);
  tree.add_usage(tree.user_assoc("u1", "acct"), 5.0, 1.0);
  qos[1].usage_raw = 7.0;
  reset_usage(tree, qos);
  CHECK(tree.node(tree.root()).usage_raw == 0.0);
  CHECK(qos[1].usage_raw == 0.0);
}

// ---------------------------------------------------------------------------------------------
// Fair Tree.

namespace {

Account account(const std::string& name, const std::string& parent, std::uint32_t shares,
                bool use_parent = false) {
  Account a;
  a.name = name;
  a.parent = parent;
  a.shares.value = shares;
  a.shares.parent = use_parent;
  return a;
}

UserAssoc user(const std::string& name, const std::string& acct, std::uint32_t shares) {
  UserAssoc u;
  u.user = name;
  u.account = acct;
  u.shares.value = shares;
  return u;
}

/// root: user root (1), A (3), B (1), C (0)
///   A: a1 (1), a2 (1), A_sub (Fairshare=parent) -> a3 (2)   [a3 hoisted to A's level]
///   B: b1 (1), b2 (0)
///   C: c1 (1)
Site fair_tree_site() {
  Site s;
  s.accounts = {account("root", "", 1), account("A", "root", 3), account("B", "root", 1),
                account("C", "root", 0), account("A_sub", "A", 1, /*use_parent=*/true)};
  s.associations = {user("root", "root", 1), user("a1", "A", 1), user("a2", "A", 1), user("a3", "A_sub", 2),
                    user("b1", "B", 1),      user("b2", "B", 0), user("c1", "C", 1)};
  return s;
}

double fs(const AssocTree& t, const std::string& u, const std::string& a) {
  return t.node(t.user_assoc(u, a)).fs_factor;
}

}  // namespace

TEST_CASE("assoc tree hoists Fairshare=parent children and sums level shares on the fs-parent") {
  const AssocTree t(fair_tree_site());
  CHECK(t.user_count() == 7);  // root's user association counts in N
  const AssocIndex a = t.account("A");
  const AssocIndex a_sub = t.account("A_sub");
  const AssocIndex a3 = t.user_assoc("a3", "A_sub");
  CHECK(t.node(a3).parent == a_sub);
  CHECK(t.node(a3).fs_parent == a);
  CHECK(t.children(a_sub).empty());
  // A's children in insertion order: accounts first (A_sub), then users a1, a2, a3.
  REQUIRE(t.children(a).size() == 4);
  CHECK(t.children(a)[0] == a_sub);
  CHECK(t.children(a)[3] == a3);
  CHECK(t.node(a).level_shares == 5);   // root level: root user 1 + A 3 + B 1 + C 0
  CHECK(t.node(a3).level_shares == 4);  // A level: a1 1 + a2 1 + A_sub (its own children: 0) + a3 2
  CHECK(t.find_user_assoc("a3", "A") == kNoAssoc);
  CHECK(t.find_account("nope") == kNoAssoc);
  CHECK_THROWS_AS(t.account("nope"), std::invalid_argument);
}

TEST_CASE("Fair Tree ranks users by level fairshare on an unequal 3-level tree") {
  AssocTree t(fair_tree_site());
  // Usage (billing-s): a1 30, a2 10, b1 20 -> A 40, B 20, root 60.
  t.add_usage(t.user_assoc("a1", "A"), 30.0, 0.0);
  t.add_usage(t.user_assoc("a2", "A"), 10.0, 0.0);
  t.add_usage(t.user_assoc("b1", "B"), 20.0, 0.0);
  compute_fair_tree(t);
  // Root level (level_shares 5): user root S=.2, U=0 -> inf; A S=.6, U=40/60 -> LF .9;
  // B S=.2, U=20/60 -> .6; C S=0 -> 0.
  CHECK(t.node(t.account("A")).level_fs == near(0.9));
  CHECK(t.node(t.account("B")).level_fs == near(0.6));
  CHECK(t.node(t.account("C")).level_fs == 0.0);
  // A level (level_shares 4): a3 S=.5, U=0 -> inf; A_sub parent -> NO_VAL; a2 S=.25, U=.25 -> 1;
  // a1 S=.25, U=.75 -> 1/3.
  CHECK(std::isinf(t.node(t.user_assoc("a3", "A_sub")).level_fs));
  CHECK(t.node(t.account("A_sub")).level_fs == 4294967294.0);
  CHECK(t.node(t.account("A_sub")).shares_norm == near(0.6));  // A's S
  CHECK(t.node(t.user_assoc("a2", "A")).level_fs == near(1.0));
  CHECK(t.node(t.user_assoc("a1", "A")).level_fs == near(1.0 / 3.0));
  // B level: b1 S=1, U=1 -> 1; b2 S=0 -> 0. C level: c1 S=1, U=0/0 -> 0 -> inf.
  // Order root(inf) > A{a3, A_sub{}, a2, a1} > B{b1, b2} > C{c1}; ranks 7..1 over N = 7.
  CHECK(fs(t, "root", "root") == near(7.0 / 7.0));
  CHECK(fs(t, "a3", "A_sub") == near(6.0 / 7.0));
  CHECK(fs(t, "a2", "A") == near(5.0 / 7.0));
  CHECK(fs(t, "a1", "A") == near(4.0 / 7.0));
  CHECK(fs(t, "b1", "B") == near(3.0 / 7.0));
  CHECK(fs(t, "b2", "B") == near(2.0 / 7.0));  // zero shares: last among its siblings, still > 0
  CHECK(fs(t, "c1", "C") == near(1.0 / 7.0));  // idle user under a zero-share account: > 0
}

TEST_CASE("Fair Tree with zero usage: zero-share users still rank below the tied rest") {
  AssocTree t(fair_tree_site());
  compute_fair_tree(t);
  // Root: user root inf, A inf, B inf (all U=0), C 0. rank=rnt=7.
  // root user: untied (prev NO_VAL) -> 7/7, rnt 6. A tied with prev inf -> its first child tied:
  // a1, a2, a3 (inf, users first) all keep rank 7 (rnt 5,4,3); A_sub (NO_VAL) untied, no children.
  // B tied (inf == inf): b1 keeps 7 (rnt 2); b2 (S=0, LF 0) untied -> rank 2 -> 2/7 (rnt 1).
  // C (0) untied: c1 (inf) untied vs NO_VAL -> rank 1 -> 1/7.
  CHECK(fs(t, "root", "root") == 1.0);
  CHECK(fs(t, "a1", "A") == 1.0);
  CHECK(fs(t, "a2", "A") == 1.0);
  CHECK(fs(t, "a3", "A_sub") == 1.0);
  CHECK(fs(t, "b1", "B") == 1.0);
  CHECK(fs(t, "b2", "B") == near(2.0 / 7.0));
  CHECK(fs(t, "c1", "C") == near(1.0 / 7.0));
}

TEST_CASE("Fair Tree with zero usage and positive shares ties everyone at N/N") {
  Site s;
  s.accounts = {account("root", "", 1), account("X", "root", 1), account("Y", "root", 2)};
  s.associations = {user("x1", "X", 1), user("x2", "X", 5), user("y1", "Y", 1)};
  AssocTree t(s);
  compute_fair_tree(t);
  CHECK(fs(t, "x1", "X") == 1.0);  // 3/3
  CHECK(fs(t, "x2", "X") == 1.0);
  CHECK(fs(t, "y1", "Y") == 1.0);
}

TEST_CASE("Fair Tree tied sibling users share a rank, tied sibling accounts differ by TieMode") {
  // root: P (1), Q (1); P: p1 (1), p2 (1); Q: q1 (1), q2 (1). N = 4.
  Site s;
  s.accounts = {account("root", "", 1), account("P", "root", 1), account("Q", "root", 1)};
  s.associations = {user("p1", "P", 1), user("p2", "P", 1), user("q1", "Q", 1), user("q2", "Q", 1)};
  AssocTree t(s);
  // Usage: p1 5, p2 5 (P 10); q1 2, q2 8 (Q 10); root 20.
  t.add_usage(t.user_assoc("p1", "P"), 5.0, 0.0);
  t.add_usage(t.user_assoc("p2", "P"), 5.0, 0.0);
  t.add_usage(t.user_assoc("q1", "Q"), 2.0, 0.0);
  t.add_usage(t.user_assoc("q2", "Q"), 8.0, 0.0);
  // LF: P = .5/.5 = 1, Q = .5/.5 = 1 (tied accounts); p1 = p2 = .5/.5 = 1 (tied users);
  // q1 = .5/.2 = 2.5; q2 = .5/.8 = .625.
  SUBCASE("code behaviour (default)") {
    compute_fair_tree(t);
    // P first: p1 rank 4 -> 1.0 (rnt 3), p2 tied -> 1.0 (rnt 2). Q tied with P -> its first child
    // q1 inherits the tie: rank stays 4 -> 1.0 (rnt 1); q2 untied -> rank 1 -> 0.25.
    CHECK(fs(t, "p1", "P") == 1.0);
    CHECK(fs(t, "p2", "P") == 1.0);
    CHECK(fs(t, "q1", "Q") == 1.0);
    CHECK(fs(t, "q2", "Q") == near(0.25));
  }
  SUBCASE("documented merge") {
    compute_fair_tree(t, TieMode::kDocumented);
    // Merged [q1 2.5, p1 1, p2 1, q2 .625]: q1 4/4, p1 3/4, p2 tied 3/4, q2 1/4.
    CHECK(fs(t, "q1", "Q") == 1.0);
    CHECK(fs(t, "p1", "P") == near(0.75));  // differs from the code behaviour (1.0)
    CHECK(fs(t, "p2", "P") == near(0.75));
    CHECK(fs(t, "q2", "Q") == near(0.25));
  }
}

TEST_CASE("Fair Tree ranks a higher-LF account's whole subtree before lower-LF sibling users") {
  // root: users u, v, w (1 each; usage 10, 10, 40) and account K (2, idle) with user k.
  Site s;
  s.accounts = {account("root", "", 1), account("K", "root", 2)};
  s.associations = {user("u", "root", 1), user("v", "root", 1), user("w", "root", 1), user("k", "K", 1)};
  AssocTree t(s);
  t.add_usage(t.user_assoc("u", "root"), 10.0, 0.0);
  t.add_usage(t.user_assoc("v", "root"), 10.0, 0.0);
  t.add_usage(t.user_assoc("w", "root"), 40.0, 0.0);
  compute_fair_tree(t);
  // level_shares 5; K S=.4 U=0 -> inf; u,v S=.2 U=10/60 -> 1.2 (tied); w S=.2 U=40/60 -> .3.
  // Order K{k}, u, v, w: k 4/4, u 3/4, v tied 3/4, w 1/4.
  CHECK(fs(t, "k", "K") == 1.0);
  CHECK(fs(t, "u", "root") == near(0.75));
  CHECK(fs(t, "v", "root") == near(0.75));
  CHECK(fs(t, "w", "root") == near(0.25));
}

TEST_CASE("classic fair share: 2^(-usage_efctv/shares_norm/damp) with effective usage") {
  // root: A (3), B (1); A: a1 (1), a2 (3); B: b1 (1). Usage a1 20, a2 40, b1 40 (root 100).
  Site s;
  s.accounts = {account("root", "", 1), account("A", "root", 3), account("B", "root", 1)};
  s.associations = {user("a1", "A", 1), user("a2", "A", 3), user("b1", "B", 1)};
  AssocTree t(s);
  t.add_usage(t.user_assoc("a1", "A"), 20.0, 0.0);
  t.add_usage(t.user_assoc("a2", "A"), 40.0, 0.0);
  t.add_usage(t.user_assoc("b1", "B"), 40.0, 0.0);
  SUBCASE("classic") {
    compute_classic_fair_share(t, 1, /*depth_oblivious=*/false);
    // shares_norm: A 3/4, B 1/4, a1 1/4*3/4 = .1875, a2 3/4*3/4 = .5625, b1 1*1/4 = .25.
    CHECK(t.node(t.user_assoc("a1", "A")).shares_norm == near(0.1875));
    CHECK(t.node(t.user_assoc("a2", "A")).shares_norm == near(0.5625));
    // usage_efctv: A .6 (child of root: usage_norm); a1 = .2 + (.6-.2)*1/4 = .3;
    // a2 = .4 + (.6-.4)*3/4 = .55; b1 = .4 + (.4-.4)*1 = .4.
    CHECK(t.node(t.user_assoc("a1", "A")).usage_efctv == near(0.3));
    CHECK(t.node(t.user_assoc("a2", "A")).usage_efctv == near(0.55));
    // fs: a1 2^-(.3/.1875) = 2^-1.6 = .32987697769322355; a2 2^-(.55/.5625) = .5077612562521374;
    // b1 2^-(.4/.25) = 2^-1.6.
    CHECK(fs(t, "a1", "A") == near(0.32987697769322355));
    CHECK(fs(t, "a2", "A") == near(0.5077612562521374));
    CHECK(fs(t, "b1", "B") == near(0.32987697769322355));
    compute_classic_fair_share(t, 2, false);  // dampening 2: a1 2^-0.8 = .5743491774985174
    CHECK(fs(t, "a1", "A") == near(0.5743491774985174));
  }
  SUBCASE("depth-oblivious") {
    compute_classic_fair_share(t, 1, /*depth_oblivious=*/true);
    // a1: ratio_p = .6/.75 = .8; ratio_s = (.2+.4)/.75 = .8; ratio_l = (.2/.1875)/.8 = 4/3;
    // ln(.8)*ln(4/3) < 0 -> k = 1/(1+(5 ln .8)^2) = .44546880246460496;
    // ue = .8 * (4/3)^k * .1875 = .17050910250112208; fs = 2^-(ue/.1875) = .5324131537874153.
    CHECK(t.node(t.user_assoc("a1", "A")).usage_efctv == doctest::Approx(0.17050910250112208).epsilon(1e-9));
    CHECK(fs(t, "a1", "A") == doctest::Approx(0.5324131537874153).epsilon(1e-9));
    // a2: ratio_l = (.4/.5625)/.8 = 8/9; ln(.8)*ln(8/9) > 0 -> k = 1;
    // ue = .8 * 8/9 * .5625 = .4; fs = 2^-(.4/.5625) = .6105...
    CHECK(t.node(t.user_assoc("a2", "A")).usage_efctv == doctest::Approx(0.4).epsilon(1e-9));
  }
}
