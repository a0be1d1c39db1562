# Entry points. Each one installs what is missing (Debian packages) and builds first.
#
#   make sim [KERNEL=stream] [ARGS="-n 25600 --free-dim 200"]   run a kernel on the RTL
#   make test                                                   build and run the test suite
#   make bench                                                  speed figures (long; not a test)
#   make waves [KERNEL=conv] [ARGS="..."]                       run with an FST dump, open it in GTKWave
#   make conv-harness [ARGS="--test-maxpool --backend golden"]  the assignment's conv test harness
#   make lint                                                   verilator --lint-only -Wall
#   make isa                                                    regenerate the ISA/preset outputs
#   make clean
#
# JOBS sets the build parallelism (default: the machine's cores).

BUILD   ?= build
JOBS    ?= $(shell nproc 2>/dev/null || echo 2)
KERNEL  ?= stream
# Default arguments per kernel (ARGS= on the command line replaces them).
ARGS_stream         = -n 25600 --free-dim 200 --check
ARGS_transpose      = -n 256 -m 384 --check
ARGS_matmul         = -k 256 -m 256 -n 1024 --check
ARGS_matmul_blocked = -k 256 -m 256 -n 1024 --check
ARGS_conv           = --check
ARGS    ?= $(if $(ARGS_$(KERNEL)),$(ARGS_$(KERNEL)),-n 25600 --check)
CMAKE_FLAGS ?= -DCMAKE_BUILD_TYPE=Release

.PHONY: all deps configure build sim waves test bench conv-harness lint isa clean

all: build

deps:
	@tools/install-deps

$(BUILD)/CMakeCache.txt: | deps
	cmake -S . -B $(BUILD) $(CMAKE_FLAGS)

configure: $(BUILD)/CMakeCache.txt

build: configure
	cmake --build $(BUILD) -j $(JOBS)

sim: configure
	cmake --build $(BUILD) -j $(JOBS) --target ncore-sim
	$(BUILD)/sim/ncore-sim --kernel $(KERNEL) $(ARGS)

# GTKWave save files by kernel (waves/): the vector-add kernels share one.
WAVES_SAVE = waves/$(if $(filter naive tiled stream direct_alloc direct_alloc_bad,$(KERNEL)),vector_add,$(if $(filter matmul_blocked,$(KERNEL)),matmul,$(KERNEL))).gtkw

waves: configure
	cmake --build $(BUILD) -j $(JOBS) --target ncore-sim
	@mkdir -p $(BUILD)/waves
	$(BUILD)/sim/ncore-sim --kernel $(KERNEL) $(ARGS) --waves $(BUILD)/waves/$(KERNEL).fst
	@tools/open-waves $(BUILD)/waves/$(KERNEL).fst $(WAVES_SAVE)

test: build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

bench: build
	tools/bench --build $(BUILD) --json $(BUILD)/bench.json

conv-harness: configure
	cmake --build $(BUILD) -j $(JOBS) --target ncore-sim
	tools/conv-harness --sim $(BUILD)/sim/ncore-sim $(if $(filter command line,$(origin ARGS)),$(ARGS),--test-maxpool)

lint: deps
	tools/lint

isa: configure
	cmake --build $(BUILD) --target isa-update

clean:
	rm -rf $(BUILD)
