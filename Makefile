# TinyDiT in C. `make` builds everything, `make check` runs every test.
# See README.md for the tour; mk/common.mk holds the shared rules.
ROOT := .
# `make` alone: everything (the included mk/*.mk would otherwise make their
# first target, the library, the default)
.DEFAULT_GOAL := all
# Where the tutorial's runs go (make tutorial, plots, report, ablation).
# Set before mk/plots.mk, whose own default must not win; then made absolute,
# because the recipes start programs from other folders (cd step1_scorecard).
RUNS ?= runs
override RUNS := $(abspath $(RUNS))
include mk/common.mk
include mk/data.mk
include mk/hardening.mk
include mk/plots.mk

STEPS := $(sort $(wildcard step[0-9]_*))
# the program folders: the steps, then the lab (lab/: the experiments around step 6)
PROGRAM_DIRS := $(STEPS) lab
TEST_SRC := $(wildcard tests/test_*.c)
TESTS := $(patsubst tests/%.c,$(BUILD)/tests/%,$(TEST_SRC))
# make check CHECK_SKIP=test_tutorial runs the other test programs (make sanitize does)
CHECK_SKIP ?=
CHECK_TESTS = $(filter-out $(addprefix $(BUILD)/tests/,$(CHECK_SKIP)),$(TESTS))
GOLDEN_DIR ?= tests/golden

# step1_scorecard -> step1, step2_rmsnorm -> step2, ...
STEP_TARGETS := $(foreach s,$(STEPS),$(firstword $(subst _, ,$(s))))
.PHONY: all lib check golden golden-files layer-files replay clean deps tests tools tutorial lab \
        exercises grade grade-objects $(STEP_TARGETS)
all: lib tests tools $(STEP_TARGETS) lab
lib: $(LIB)
# grade-objects: what `make grade` links, which tests/test_exercises.c runs
tests: $(TESTS) $(BUILD)/tests/golden_check grade-objects

# make check: the library's tests, then each program folder's tests.
# Everything is built first: tests/test_tutorial.c runs `make tutorial` in a
# copy of it.
check: all
	@set -e; for t in $(CHECK_TESTS); do echo "== $$t"; $$t; done
	@set -e; for s in $(PROGRAM_DIRS); do $(MAKE) --no-print-directory -C $$s check; done

# The main job: the whole tutorial, steps 1 to 6, at the quick preset, into
# runs/ (PRESET=tutorial RUNS=runs/tutorial for the full-size runs,
# PRESET=smoke RUNS=/tmp/smoke to try the machinery in minutes; SEEDS=3 for
# three seeds of every configuration, JOBS=2 for two runs side by side).
# First `lab estimate` times a few steps of every configuration here and
# says how long the job will take (lab/estimate.c). The baseline pair of
# step 6 is trained first so that step 1 reads it instead of training the
# same two runs again. Every run resumes where it stopped. RUNS and
# CIFAR_DIR reach the programs as absolute paths (see above and
# mk/common.mk). `make data` only when CIFAR_DIR does not name the data.
PRESET ?= quick
# ESTIMATE=no skips the estimate (the tests run the job without timing it)
ESTIMATE ?= yes
SEEDS ?= 1
JOBS ?= 1
S6 := step6_ablation/step6_ablation
LAB := lab/lab
ABLATION_OPTS = --preset $(PRESET) --seeds $(SEEDS) --jobs $(JOBS) --out $(RUNS)
tutorial: all $(if $(CIFAR_DIR),,data)
	@mkdir -p $(RUNS)
	$(if $(filter yes,$(ESTIMATE)),$(LAB) estimate $(ABLATION_OPTS) --save $(RUNS)/estimate.txt)
	$(LAB) ablation $(ABLATION_OPTS) --only p11_base_s0,p11_base_s1
	cd step1_scorecard && ./step1_scorecard --preset $(PRESET) --out $(RUNS) --figures $(RUNS)/figures
	cd step2_rmsnorm && ./step2_rmsnorm --figures $(RUNS)/figures
	cd step3_qknorm && ./step3_qknorm --figures $(RUNS)/figures
	cd step4_swiglu && ./step4_swiglu --figures $(RUNS)/figures
	cd step5_rope2d && ./step5_rope2d --figures $(RUNS)/figures
	$(LAB) ablation $(ABLATION_OPTS)
	$(S6) table $(RUNS)
	$(MAKE) --no-print-directory runs-plots RUNS=$(RUNS)
	@$(if $(filter yes,$(ESTIMATE)),$(LAB) estimate --since $(RUNS)/estimate.txt)
	@echo "done: $(RUNS)/report.md, $(RUNS)/plots/ and $(RUNS)/figures/"

# make golden: the C model against every golden file (tests/golden, made by
# the project's PyTorch reference tools/tinydit_ref.py and committed; `make
# check` runs the same comparison). make golden-files writes them again; it
# needs PyTorch, looked for in python3, then in Debian's /usr/bin/python3.
golden: $(BUILD)/tests/golden_check
	$(BUILD)/tests/golden_check $(GOLDEN_DIR)

TORCH_PYTHON = $(firstword $(foreach p,python3 /usr/bin/python3,$(shell $(p) -c 'import torch' 2>/dev/null && echo $(p))))
# The first line of a recipe that needs PyTorch: without it, says how to get it and fails.
NEED_TORCH = @if [ -z "$(TORCH_PYTHON)" ]; then \
	    echo "make $@: PyTorch is not installed (no python3 can import torch)."; \
	    echo "Install it with:  apt-get install python3-torch"; exit 1; fi
golden-files:
	$(NEED_TORCH)
	$(TORCH_PYTHON) tools/tinydit_ref.py golden $(GOLDEN_DIR)

# make layer-files: the per-layer references of steps 2 to 5 (tests/golden/layers,
# committed; common/eval/parity.c compares our layers with them).
layer-files:
	$(NEED_TORCH)
	$(TORCH_PYTHON) tools/tinydit_ref.py layers $(GOLDEN_DIR)/layers

# make exercises: a workbook, a copy of the project in WORKBOOK (default
# workbook/, ignored by git) where every exercise's body (the lines between
# `EXERCISE(name) begin` and `EXERCISE end` in common/nn) is a stub that says
# "not written yet" and aborts, and every page that quotes a body shows the
# stub instead; docs/exercises.md is the guide. The reference bodies are
# kept in build/exercises/ (scripts/exercises.sh restore puts them back);
# the workbook gets them compiled only, in grade_reference/, so that a grade
# can run one exercise of yours with the reference for all the others.
WORKBOOK ?= workbook
exercises: grade-objects
	@mkdir -p $(BUILD)/exercises
	scripts/exercises.sh workbook $(WORKBOOK) $(BUILD)/exercises/reference_bodies.txt $(GRADE)/obj

# make grade: every exercise graded with the project's tests
# (scripts/grade.sh); make grade EX=name one of them; `make grade` in a step
# folder grades that step's. Each exercise is graded on its own: its test
# programs are linked from the library compiled position-independent (so
# that every exercise function is called through its symbol, never inlined)
# where each other exercise's function is made weak and the reference's
# (grade_reference/ in a workbook, the library itself in the project) wins.
GRADE := $(BUILD)/grade
GRADE_REFERENCE := $(if $(wildcard grade_reference),grade_reference,$(GRADE)/obj)
GRADE_OBJ := $(patsubst $(ROOT)/common/%.c,$(GRADE)/obj/%.o,$(COMMON_SRC))
GRADE_TEST_OBJ := $(addprefix $(GRADE)/tests/,test_layers.o test_parity.o test_adamw.o test_model.o golden_check.o)
$(GRADE)/obj/%.o: $(ROOT)/common/%.c $(COMMON_HDR)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) -fPIC -c $< -o $@
$(GRADE)/tests/%.o: tests/%.c $(wildcard tests/*.h) $(COMMON_HDR)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) -Itests $(CFLAGS) -c $< -o $@
$(GRADE)/tests/golden_check.o: tools/golden_check.c $(COMMON_HDR)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) -c $< -o $@
grade-objects: $(GRADE_OBJ) $(GRADE_TEST_OBJ)
# what grade.sh links with: the compiler and the libraries of every test program
GRADE_ENV = GRADE_DIR='$(GRADE)' GRADE_REFERENCE='$(GRADE_REFERENCE)' \
    GRADE_LINK='$(CC) $(LDFLAGS)' GRADE_LIBS='$(LDLIBS) $(CHECK_LIBS)'
EX ?=
GRADE_FLAGS ?=
grade: grade-objects
	@$(GRADE_ENV) scripts/grade.sh --times $(GRADE_FLAGS) $(if $(GRADE_STEP),--step $(GRADE_STEP)) $(EX)

# make replay: C against PyTorch step by step. build/tools/trace_steps writes
# the first TRACE_STEPS steps of the run `step6_ablation train --preset PRESET
# SET` would take (weights, batches, noise, times, losses), and
# tools/torch_train.py replays them from the same weights on the same inputs,
# printing both losses. E.g. make replay SET="--set pos=rope2d"
TRACE_STEPS ?= 100
TRACE ?= $(RUNS)/trace.safetensors
SET ?=
replay: $(BUILD)/tools/trace_steps
	$(NEED_TORCH)
	@mkdir -p $(dir $(TRACE))
	$(BUILD)/tools/trace_steps --preset $(PRESET) --steps $(TRACE_STEPS) $(SET) $(TRACE)
	$(TORCH_PYTHON) tools/torch_train.py replay $(TRACE)

$(BUILD)/tests/golden_check: tools/golden_check.c $(LIB)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) $< -o $@ $(LIB) $(LDFLAGS) $(LDLIBS)

# test_trainer runs build/tools/trace_steps: whoever builds the test (make
# tests, make sanitize) builds the tool with it
$(BUILD)/tests/test_trainer: | $(BUILD)/tools/trace_steps
# test_shipped_model runs step0_tour/step0_tour (the shipped model's tour, export)
$(BUILD)/tests/test_shipped_model: | step0
# test_faults runs step6_ablation/step6_ablation (train, when things go wrong)
$(BUILD)/tests/test_faults: | step6
# test_gemm_race runs build/tools/gemm_race (the libraries on the model's products)
$(BUILD)/tests/test_gemm_race: | $(BUILD)/tools/gemm_race
# gemm_race links libxsmm when it is installed (Debian's libxsmm-dev is a
# static library only, so it cannot be loaded at run time as oneDNN and BLIS are)
XSMM_LIBS := $(if $(wildcard /usr/lib/libxsmm.a /usr/lib/x86_64-linux-gnu/libxsmm.a),$(shell pkg-config --libs libxsmm 2>/dev/null))
$(BUILD)/tools/gemm_race: private CPPFLAGS += $(if $(XSMM_LIBS),-DHAVE_LIBXSMM)
$(BUILD)/tools/gemm_race: private LDLIBS += $(XSMM_LIBS)

# small tools: build/tools/train_probe (trains or loads the cached probe) ...
TOOLS := $(patsubst tools/%.c,$(BUILD)/tools/%,$(filter-out tools/golden_check.c,$(wildcard tools/*.c)))
tools: $(TOOLS)
$(BUILD)/tools/%: tools/%.c $(LIB)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) $< -o $@ $(LIB) $(LDFLAGS) $(LDLIBS)

# make step3 (from the root) builds step3_qknorm/step3_qknorm, and so on.
$(STEP_TARGETS): lib
	$(MAKE) --no-print-directory -C $(wildcard $@_*) $@
# make lab builds lab/lab (and the step 6 program its runs call)
lab: lib
	$(MAKE) --no-print-directory -C lab lab

# libdnnl-dev: oneDNN, whose dnnl_sgemm runs the model's matrix products
# (common/nn/matmul.c); OpenBLAS does LAPACK and the probe network's products.
# libxsmm-dev, libblis4-openmp: the rivals build/tools/gemm_race races them against
DEB_PACKAGES := build-essential pkg-config libopenblas-openmp-dev liblapacke-dev check \
                libcjson-dev libstb-dev gnuplot-nox zlib1g-dev graphviz \
                libdnnl-dev libxsmm-dev libblis4-openmp
# As root it installs; as a user with sudo, through sudo; otherwise it says
# what to run as root and fails, so that `make deps && make tutorial` stops.
APT_INSTALL = apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq
deps:
	@if [ "$$(id -u)" = 0 ]; then $(APT_INSTALL) $(DEB_PACKAGES); \
	elif command -v sudo >/dev/null; then sudo sh -c '$(APT_INSTALL) $(DEB_PACKAGES)'; \
	else echo "make deps: run this as root:  apt-get install -y $(DEB_PACKAGES)"; exit 1; fi

clean:
	rm -rf $(BUILD)
	@for s in $(PROGRAM_DIRS); do $(MAKE) --no-print-directory -C $$s clean; done
