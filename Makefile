# Entry points. Each one installs what is missing (Debian packages) and builds first.
#
#   make sim [KERNEL=stream] [ARGS="-n 25600 --free-dim 200"]   run a kernel on the RTL
#   make test [SANITIZE=address,undefined]                      build and run the test suite (SANITIZE: with
#                                                               those sanitizers, in build-asan)
#   make fuzz [FUZZ_RUNS=1000000] [FUZZ_SECONDS=600] [FUZZ_SEED=0] build (clang, build-fuzz) and run the libFuzzer
#                                                               targets (tests/fuzz)
#   make bench [BASELINE=REV] [BENCH_ARGS=--quick]               speed figures (long; not a test); BASELINE
#                                                               runs a revision's build beside this one
#   make waves [KERNEL=conv] [ARGS="..."]                       run with an FST dump, open it in GTKWave
#   make conv-harness [ARGS="--test-maxpool --backend golden"]  the assignment's conv test harness
#   make fidelity [TUTORIAL=1] [SCHEDULER=tcp://HOST:PORT]      the model against Trainium measurements (TUTORIAL:
#                                                               also the NKI matmul tutorial's kernels as rewritten
#                                                               here, on trn1 at the measured size: 45 minutes)
#   make regress [SEED=1] [COUNT=N] [MINUTES=30] [PRESET=tiny,trn2] [SCHEDULER=tcp://HOST:PORT]
#                                                               random Programs on the RTL in lockstep with the
#                                                               golden model; a failure is shrunk and written out
# SCHEDULER runs fidelity's cases and regress's Programs (COUNT of them, by seed range) on a Dask
# cluster's workers (local: this machine's cores; docs/sweeps.md); `make conv-harness ARGS="--scheduler ..."`.
#   make coverage [COUNT=200 | MINUTES=M] [KERNELS=all|quick|none] [SEED=1]
#                                                               the coverage build (build-cov): random Programs
#                                                               and the kernels, a per-module table, HTML report
#   make lint                                                   verilator --lint-only -Wall
#   make synth                                                  Yosys 0.23 on the RTL: cells per module, or the
#                                                               construct it stops at (build/synth/synth.md)
#   make isa                                                    regenerate the ISA/preset outputs
#
# bench, fidelity and regress record their figures in docs/figures/ and rewrite the docs' tables
# of them (tools/doc-tables; a test fails when a committed table differs from its figures).
#   make clean
#
# JOBS sets the build parallelism (default: the machine's cores). ASSERT=ON configures a build
# whose full cores have the RTL's assertions (the unit benches always have them; see docs/verification.md).

SANITIZE ?=
ifneq ($(SANITIZE),)
# A sanitized build lives in its own directory (the name says which sanitizers).
BUILD   ?= build-$(if $(filter address,$(subst $(comma), ,$(SANITIZE))),asan,$(subst $(comma),-,$(SANITIZE)))
SAN_FLAGS = -DNCORE_SANITIZE=$(SANITIZE)
endif
comma := ,
BUILD   ?= build
JOBS    ?= $(shell nproc 2>/dev/null || echo 2)
KERNEL  ?= stream
# Without ARGS a kernel runs with the example arguments its declaration gives
# (`ncore-sim --kernel K --print example`); ARGS= on the command line replaces them.
ARGS    ?=
RUN_ARGS = --kernel $(KERNEL) $(if $(ARGS),$(ARGS),--example)
CMAKE_FLAGS ?= -DCMAKE_BUILD_TYPE=Release $(if $(ASSERT),-DNCORE_ASSERT=$(ASSERT))
FUZZ_BUILD ?= build-fuzz
FUZZ_RUNS ?= 1000000
FUZZ_SECONDS ?= 600
FUZZ_SEED ?= 0
# make regress: the first seed, the presets, and how long (COUNT programs, or MINUTES of wall time)
SEED    ?= 1
PRESET  ?= tiny,trn2
MINUTES ?= $(if $(COUNT),,30)
# make coverage: its build directory and which kernel runs it adds to the random Programs
COV_BUILD ?= build-cov
KERNELS ?= all
# make fidelity, make regress: a Dask scheduler's address (or local) to run on
SCHEDULER ?=

.PHONY: all deps configure build sim waves test fuzz bench conv-harness fidelity regress coverage lint synth isa clean

all: build

deps:
	@tools/install-deps

$(BUILD)/CMakeCache.txt: | deps
	cmake -S . -B $(BUILD) $(CMAKE_FLAGS) $(SAN_FLAGS)

configure: $(BUILD)/CMakeCache.txt

build: configure
	cmake --build $(BUILD) -j $(JOBS)

sim: configure
	cmake --build $(BUILD) -j $(JOBS) --target ncore-sim
	$(BUILD)/sim/ncore-sim $(RUN_ARGS)

waves: configure
	cmake --build $(BUILD) -j $(JOBS) --target ncore-sim
	@mkdir -p $(BUILD)/waves
	$(BUILD)/sim/ncore-sim $(RUN_ARGS) --waves $(BUILD)/waves/$(KERNEL).fst
	@tools/open-waves $(BUILD)/waves/$(KERNEL).fst waves/$$($(BUILD)/sim/ncore-sim --kernel $(KERNEL) --print waves).gtkw

test: build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

$(FUZZ_BUILD)/CMakeCache.txt: | deps
	cmake -S . -B $(FUZZ_BUILD) -DCMAKE_BUILD_TYPE=Release -DNCORE_FUZZ=ON \
	  -DCMAKE_C_COMPILER=clang-16 -DCMAKE_CXX_COMPILER=clang++-16

fuzz: $(FUZZ_BUILD)/CMakeCache.txt
	cmake --build $(FUZZ_BUILD) -j $(JOBS) --target fuzz-targets
	tools/fuzz --build $(FUZZ_BUILD) --runs $(FUZZ_RUNS) --seconds $(FUZZ_SECONDS) --seed $(FUZZ_SEED)

bench: build
	tools/bench --build $(BUILD) --json $(BUILD)/bench.json $(if $(BASELINE),--baseline-rev $(BASELINE)) $(BENCH_ARGS)
	tools/doc-tables --take bench $(BUILD)/bench.json

conv-harness: configure
	cmake --build $(BUILD) -j $(JOBS) --target ncore-sim
	tools/conv-harness --sim $(BUILD)/sim/ncore-sim $(if $(filter command line,$(origin ARGS)),$(ARGS),--test-maxpool)

fidelity: configure
	cmake --build $(BUILD) -j $(JOBS) --target ncore-sim $(if $(TUTORIAL),_ncore_native ncore_model_trn1_fastpe)
	tools/fidelity --sim $(BUILD)/sim/ncore-sim --json $(BUILD)/fidelity.json --check \
	  $(if $(TUTORIAL),--tutorial --python $(BUILD)/ncore-python) $(if $(SCHEDULER),--scheduler $(SCHEDULER))
	tools/doc-tables --take fidelity $(BUILD)/fidelity.json

regress: configure
	cmake --build $(BUILD) -j $(JOBS) --target ncore-regress $(if $(SCHEDULER),_ncore_native)
	$(BUILD)/tb/regress/ncore-regress --preset $(PRESET) --seed $(SEED) $(if $(COUNT),--count $(COUNT)) \
	  $(if $(MINUTES),--minutes $(MINUTES)) $(if $(SCHEDULER),--scheduler $(SCHEDULER)) \
	  --json $(BUILD)/regress.json --out $(abspath $(BUILD))/regress
	tools/doc-tables --take regress $(BUILD)/regress.json

# The coverage build: every model Verilated with line, toggle and functional coverage (and the
# assertions), in a build directory of its own; only the two programs the run needs are built.
$(COV_BUILD)/CMakeCache.txt: | deps
	cmake -S . -B $(COV_BUILD) -DCMAKE_BUILD_TYPE=Release -DNCORE_COVERAGE=ON -DNCORE_ASSERT=ON

coverage: $(COV_BUILD)/CMakeCache.txt
	cmake --build $(COV_BUILD) -j $(JOBS) --target ncore-sim ncore-regress
	tools/coverage --build $(COV_BUILD) --seed $(SEED) --kernels $(KERNELS) \
	  $(if $(filter command line,$(origin MINUTES)),--minutes $(MINUTES),--count $(or $(COUNT),200))

lint: deps
	tools/lint

synth: deps
	/usr/bin/python3 tools/synth/synth.py --out $(BUILD)/synth

isa: configure
	cmake --build $(BUILD) --target isa-update

clean:
	rm -rf $(BUILD) $(FUZZ_BUILD) $(COV_BUILD)
