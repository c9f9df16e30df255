# The two set-up commands of README.md: `make run` and `make test`. Both install missing Debian
# packages, configure and build (Release); then run the main job or the whole test suite.
BUILD ?= build
JOBS ?= $(shell nproc)
CMAKE_FLAGS ?=
# CI sets CI=true: warnings become errors there.
ifeq ($(CI),true)
  CMAKE_FLAGS += -DSLURMTWIN_WERROR=ON
endif

.PHONY: deps build run test tidy sanitize check-scenarios test-browser cli-doc docs fuzz clean format format-check oracle oracle-report oracle-ci package

deps:
	@bash cmake/install-deps.sh

build: deps
	@cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release $(CMAKE_FLAGS) > $(BUILD).configure.log 2>&1 || (cat $(BUILD).configure.log; exit 1)
	@cmake --build $(BUILD) -j $(JOBS)

# Replays the built-in default site and synthetic workload and prints a summary.
run: build
	@$(BUILD)/experiments/slurmtwin replay --out out/default

# In CI (CI=true) Chromium is installed first (so the HTML report test runs instead of skipping), the
# layout of every C++ file is checked (format-check), the Debian packages are installed with dpkg,
# replayed from /usr/bin and removed (cmake/package-test.sh --install), the
# project's regression scenarios and the live check against real Slurm (oracle-ci) run after the
# suite, clang-tidy checks the sources (tidy), the suite runs again under ASan + UBSan, and every fuzz
# target runs for CI_FUZZ_SECONDS (a crash fails CI; docs/reliability.md has the cost). The live check mostly waits on real jobs' sleeps,
# so it runs beside tidy and the sanitizer and fuzz builds, which run at the lowest CPU priority (nice 19) so
# that real Slurm's daemons keep the CPU when they need it; its log is printed when both are done. The
# fuzz packages are installed before, so that two apt-get never run at once. Both sides call the scripts
# directly, not the `oracle-ci` and `tidy` targets: those depend on `build`, and two cmake runs configuring
# $(BUILD) at once race in its TryCompile scratch (stop 42 failed so, in FindMPI).
CI_FUZZ_SECONDS ?= 10
test: build
ifeq ($(CI),true)
	@bash cmake/install-deps.sh chromium clang-format clang-tidy
	@$(MAKE) --no-print-directory format-check
endif
	@cd $(BUILD) && ctest --output-on-failure -j $(JOBS)
ifeq ($(CI),true)
	@bash cmake/package-test.sh $(BUILD) --install
	@$(MAKE) --no-print-directory check-scenarios
	@bash cmake/install-deps.sh --fuzz
	@bash tests/oracle/ci.sh $(BUILD) $(ORACLE_CI_SCENARIOS) > $(BUILD)-oracle-ci.log 2>&1 & oracle=$$!; \
	  nice -n 19 bash cmake/run-clang-tidy.sh $(BUILD) && \
	  nice -n 19 $(MAKE) --no-print-directory sanitize fuzz FUZZ_SECONDS=$(CI_FUZZ_SECONDS); rest=$$?; \
	  wait $$oracle; live=$$?; echo "--- oracle-ci (ran beside the sanitizer and fuzz stages):"; \
	  cat $(BUILD)-oracle-ci.log; echo "oracle-ci exit $$live, sanitize+fuzz exit $$rest"; \
	  [ $$live -eq 0 ] && [ $$rest -eq 0 ]
endif

# clang-tidy with .clang-tidy on every library and executable source (any finding fails; CI runs it).
tidy: build
	@bash cmake/install-deps.sh clang-tidy
	@bash cmake/run-clang-tidy.sh $(BUILD)

# Two Debian packages in $(BUILD): slurmtwin (no libtorch) and slurmtwin-surrogate (slurmtwin-torch,
# libtorch); install with apt-get install ./$(BUILD)/slurmtwin_*.deb [./$(BUILD)/slurmtwin-surrogate_*.deb].
package: build
	@cd $(BUILD) && cpack -G DEB

# The project's own regression scenarios (.ci/check/): exit 1 when a metric left its baseline.
# After an intended change of behaviour: slurmtwin check .ci/check/scenarios.yaml --update-baseline.
check-scenarios: build
	@$(BUILD)/experiments/slurmtwin check .ci/check/scenarios.yaml --junit $(BUILD)/check-junit.xml \
	  --markdown $(BUILD)/check-summary.md

# The HTML report in headless Chromium (installs the Debian package chromium when missing).
test-browser: build
	@bash cmake/install-deps.sh chromium
	@cd $(BUILD) && ctest --output-on-failure -R report_renders_in_chromium

# The whole suite under AddressSanitizer + UndefinedBehaviorSanitizer (any report fails the test).
sanitize: deps
	@cmake -S . -B $(BUILD)-asan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSLURMTWIN_SANITIZE=ON $(CMAKE_FLAGS) > $(BUILD)-asan.configure.log 2>&1 || (cat $(BUILD)-asan.configure.log; exit 1)
	@cmake --build $(BUILD)-asan -j $(JOBS)
	@cd $(BUILD)-asan && ASAN_OPTIONS=detect_leaks=1 ctest --output-on-failure -j $(JOBS)

# docs/cli.md from the binary's --help (a test checks that they agree).
cli-doc: build
	@bash cmake/gen-cli-doc.sh $(BUILD)/experiments/slurmtwin > docs/cli.md

# Walkthrough docs made by running their commands (docs/src/*.md -> docs/*.md; a test checks them).
DOC_BLOCK_PAGES = docs/site-schema.md docs/sweeps.md
docs: cli-doc
	@bash cmake/gen-doc.sh $(BUILD)/experiments/slurmtwin docs/src/getting-started.md docs/getting-started.md
	@bash cmake/gen-doc.sh $(BUILD)/experiments/slurmtwin docs/src/surrogate.md docs/surrogate.md
	@bash cmake/gen-doc-blocks.sh $(BUILD)/experiments/slurmtwin $(DOC_BLOCK_PAGES)

# libFuzzer targets for every reader and importer (clang++), FUZZ_SECONDS each on the committed seed
# corpus (tests/fuzz/). All 18 at the default 30 s take about 9.5 min plus the first build.
FUZZ_SECONDS ?= 30
fuzz:
	@bash cmake/install-deps.sh --fuzz
	@cmake -S . -B $(BUILD)-fuzz -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_COMPILER=clang++ -DSLURMTWIN_FUZZ=ON -DSLURMTWIN_BUILD_TESTS=OFF $(CMAKE_FLAGS) > $(BUILD)-fuzz.configure.log 2>&1 || (cat $(BUILD)-fuzz.configure.log; exit 1)
	@cmake --build $(BUILD)-fuzz -j $(JOBS) --target slurmtwin_fuzzers
	@bash tests/fuzz/run_fuzzers.sh $(BUILD)-fuzz $(FUZZ_SECONDS)

# Fidelity against real Slurm 22.05 on this machine (docs/fidelity.md; needs root). `oracle` runs every
# scenario of tests/oracle/scenarios twice on real Slurm (about an hour), replacing the recordings in
# tests/oracle/recorded, then regenerates docs/fidelity.md; `oracle-report` only the latter.
oracle: build
	@bash tests/oracle/oracle.sh setup
	@bash tests/oracle/oracle.sh all $(CURDIR)/tests/oracle/recorded 2
	@bash tests/oracle/oracle.sh stop
	@$(MAKE) --no-print-directory oracle-report

oracle-report: build
	@$(BUILD)/experiments/slurmtwin oracle report tests/oracle/recorded --notes tests/oracle/fidelity-notes.md \
	  -o docs/fidelity.md

# Live check (CI runs it): a few short scenarios once on real Slurm, judged against their committed
# run1 (the real-vs-real spread) and the simulator; exit status 1 when one is not accepted. Prints
# "SKIPPED: <reason>" and succeeds where the machine cannot run real Slurm (tests/oracle/ci.sh). Only
# scenarios accepted in docs/fidelity.md belong here; time measured there ("Live check").
ORACLE_CI_SCENARIOS ?= 07_preempt_qos_cancel 08_preempt_suspend 09_limits 11_dependencies 12_node_select 13_assoc_limits 14_qos_user_limits 16_impossible 17_site_files 18_outages_reservations 19_topology 20_one_node_fit 22_node_order 23_cons_res_topology 25_max_mem 26_def_per_gpu 29_partition_qos 37_exclusive_nice_begin
oracle-ci: build
	@bash tests/oracle/ci.sh $(BUILD) $(ORACLE_CI_SCENARIOS)

format:
	@git ls-files '*.cpp' '*.hpp' | xargs clang-format -i

# Every C++ file as .clang-format lays it out (CI runs it; `make format` fixes what it reports).
format-check:
	@git ls-files '*.cpp' '*.hpp' | xargs clang-format --dry-run -Werror

clean:
	rm -rf $(BUILD) $(BUILD).configure.log $(BUILD)-oracle-ci.log $(BUILD)-asan $(BUILD)-asan.configure.log $(BUILD)-fuzz $(BUILD)-fuzz.configure.log out
