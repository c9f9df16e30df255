// doctest's main plus one guard: a run whose --test-case filter matches no test case fails. ctest runs
// each test case by name (doctest_discover_tests), and a name the filter cannot match -- CMake splits
// names at ';' -- used to "pass" without running anything (12 test cases did, until they were renamed).
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <cstdio>
#include <string_view>

#include "surrogate/openmp_waits.hpp"

namespace {

unsigned g_matching_test_cases = 0;  // set at the end of the run by the listener

struct MatchCounter : doctest::IReporter {
  explicit MatchCounter(const doctest::ContextOptions&) {}
  void report_query(const doctest::QueryData&) override {}
  void test_run_start() override {}
  void test_run_end(const doctest::TestRunStats& stats) override {
    g_matching_test_cases = stats.numTestCasesPassingFilters;
  }
  void test_case_start(const doctest::TestCaseData&) override {}
  void test_case_reenter(const doctest::TestCaseData&) override {}
  void test_case_end(const doctest::CurrentTestCaseStats&) override {}
  void test_case_exception(const doctest::TestCaseException&) override {}
  void subcase_start(const doctest::SubcaseSignature&) override {}
  void subcase_end() override {}
  void log_assert(const doctest::AssertData&) override {}
  void log_message(const doctest::MessageData&) override {}
  void test_case_skipped(const doctest::TestCaseData&) override {}
};

}  // namespace

REGISTER_LISTENER("match_counter", 1, MatchCounter);

int main(int argc, char** argv) {
  slurmtwin::surrogate::reexec_with_passive_openmp_waits(argv);  // as slurmtwin-torch does
  doctest::Context context(argc, argv);
  const int rc = context.run();
  if (context.shouldExit()) return rc;  // --help, --list-test-cases, ...
  bool filtered = false;
  for (int i = 1; i < argc; ++i) {
    const std::string_view a = argv[i];
    filtered = filtered || a.starts_with("--test-case=") || a.starts_with("-tc=");
  }
  if (rc == 0 && filtered && g_matching_test_cases == 0) {
    std::fprintf(stderr, "no test case matches the --test-case filter: nothing was tested\n");
    return 1;
  }
  return rc;
}
