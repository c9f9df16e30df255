# The two set-up commands of README.md: `make run` and `make test`. Both install missing Debian
# packages, configure and build (Release); then run the main job or the whole test suite.
BUILD ?= build
JOBS ?= $(shell nproc)
CMAKE_FLAGS ?=
# CI sets CI=true: warnings become errors there.
ifeq ($(CI),true)
  CMAKE_FLAGS += -DSLURMTWIN_WERROR=ON
endif

.PHONY: deps build run test clean format

deps:
	@bash cmake/install-deps.sh

build: deps
	@cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release $(CMAKE_FLAGS) > $(BUILD).configure.log 2>&1 || (cat $(BUILD).configure.log; exit 1)
	@cmake --build $(BUILD) -j $(JOBS)

# Replays the built-in default site and synthetic workload and prints a summary.
run: build
	@$(BUILD)/experiments/slurmtwin replay --out out/default

test: build
	@cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

format:
	@git ls-files '*.cpp' '*.hpp' | xargs clang-format -i

clean:
	rm -rf $(BUILD) $(BUILD).configure.log out
