# TinyDiT in C. `make` builds everything, `make check` runs every test (README.md).
# mk/common.mk says how sources become programs, each compiled once into build/;
# this file is what you can ask for. A step folder's Makefile hands its targets here.
.DEFAULT_GOAL := all
# Where runs go (make tutorial, plots ...), absolute: programs start in other folders.
RUNS ?= runs
override RUNS := $(abspath $(RUNS))
include mk/common.mk mk/hardening.mk mk/plots.mk mk/isa.mk mk/slurm.mk

.PHONY: all tools lab $(STEP_TARGETS) check golden golden-files layer-files \
        replay exercises grade grade-objects data deps clean
all: $(LIB) $(TESTS) $(BUILD)/tests/golden_check tools $(STEP_TARGETS) lab
tools: $(TOOLS)
# make step3 builds step3_qknorm/step3_qknorm, and so on; make lab builds lab/lab
$(foreach s,$(STEPS),$(eval $(firstword $(subst _, ,$(s))): $(s)/$(s)))
lab: lab/lab
# Programs that run others: the lab and its tests (and scripts/results.sh), some tests.
lab/lab $(BUILD)/tests/test_faults: | step6_ablation/step6_ablation
$(call tests_in,lab): | step1_scorecard/step1_scorecard
$(BUILD)/tests/test_shipped_model: | step0_tour/step0_tour
$(BUILD)/tests/test_trainer: | $(BUILD)/tools/trace_steps

# make check: everything built (tests/test_tutorial.c runs `make tutorial` in
# a copy), then every test program, each in its folder: tests/, then each
# program folder's (`make check` in a folder: CHECK_DIRS=that folder alone).
# CHECK_SKIP=test_x leaves one out; KEEP_GOING=yes goes on after a failure.
# Each program adds to CHECK_LOG the tests it ran and failed, and each test
# that could not run, why (tests/testutil.h: test_skip); the last lines sum
# them up. TINYDIT_NO_SKIPS=1 (or a list: cifar,gnuplot,...) fails a skip.
CHECK_DIRS ?= tests $(PROGRAM_DIRS)
CHECK_TESTS = $(filter-out $(addprefix %/,$(CHECK_SKIP)),$(foreach d,$(CHECK_DIRS),$(call tests_in,$(d))))
CHECK_LOG := $(CURDIR)/$(BUILD)/check.log
check: $(if $(filter tests,$(CHECK_DIRS)),all grade-objects,$(CHECK_TESTS) $(foreach d,$(CHECK_DIRS),$(d)/$(d)))
	@: >$(CHECK_LOG); failed=; n=0; for t in $(CHECK_TESTS); do echo "== $$t"; n=$$((n + 1)); \
	    d=$${t#$(BUILD)/}; d=$${d%/*}; [ $$d != tests ] || d=.; \
	    (cd $$d && TINYDIT_CHECK_LOG=$(CHECK_LOG) TINYDIT_CHECK_WHO=$${t##*/} $(CURDIR)/$$t) || \
	    { failed="$$failed $$t"; [ -n "$(KEEP_GOING)" ] || break; }; done; \
	awk -v programs=$$n -v failed="$$failed" -f mk/check_summary.awk $(CHECK_LOG); [ -z "$$failed" ]

# make golden: the C model against GOLDEN_DIR's golden files; golden-files and
# layer-files (steps 2 to 5's, for common/eval/parity.c) write them with PyTorch.
GOLDEN_DIR ?= tests/golden
golden: $(BUILD)/tests/golden_check
	$(BUILD)/tests/golden_check $(GOLDEN_DIR)
TORCH_PYTHON = $(firstword $(foreach p,python3 /usr/bin/python3,$(shell $(p) -c 'import torch' 2>/dev/null && echo $(p))))
# The first line of a recipe that needs PyTorch: without it, says how to get it and fails.
NEED_TORCH = @if [ -z "$(TORCH_PYTHON)" ]; then printf '%s\n' "make $@: PyTorch is not installed (no python3 \
	can import torch)." "Install it with:  apt-get install python3-torch"; exit 1; fi
golden-files:
	$(NEED_TORCH)
	$(TORCH_PYTHON) tools/tinydit_ref.py golden $(GOLDEN_DIR)
layer-files:
	$(NEED_TORCH)
	$(TORCH_PYTHON) tools/tinydit_ref.py layers $(GOLDEN_DIR)/layers

# make replay [SET="--set pos=rope2d"]: C against PyTorch, step by step: the
# first TRACE_STEPS steps of a run (weights, batches, noise, losses) replayed.
TRACE_STEPS ?= 100
TRACE ?= $(RUNS)/trace.safetensors
replay: $(BUILD)/tools/trace_steps
	$(NEED_TORCH)
	@mkdir -p $(dir $(TRACE))
	$(BUILD)/tools/trace_steps --preset $(PRESET) --steps $(TRACE_STEPS) $(SET) $(TRACE)
	$(TORCH_PYTHON) tools/torch_train.py replay $(TRACE)

# make exercises: a workbook (WORKBOOK, default workbook/) where every
# exercise's body in common/nn is a stub, on the pages too (docs/exercises.md);
# it starts with this build's objects of the files that hold no exercise.
# make grade [EX=name]: each exercise graded on its own by the tests
# (scripts/grade.sh): one program per exercise, the test programs'
# objects (their mains renamed) and the library's, the files that hold
# exercises compiled a second time, position-independent (each exercise
# function called through its symbol, never inlined), so that the
# reference's functions can stand in for every other exercise.
WORKBOOK ?= workbook
exercises: grade-objects
	@mkdir -p $(BUILD)/exercises
	scripts/exercises.sh workbook $(WORKBOOK) $(BUILD)/exercises/reference_bodies.txt $(GRADE)/obj \
	    $(GRADE_PLAIN) $(GRADE_MAINS) $(BUILD)/tests/grade_main.o
GRADE := $(BUILD)/grade
EXERCISE_SRC := $(shell grep -rl --include='*.c' 'EXERCISE([a-z0-9_]*) begin' common | LC_ALL=C sort)
GRADE_PLAIN := $(call objects,$(filter-out $(EXERCISE_SRC),$(COMMON_SRC)))
GRADE_MAINS := $(BUILD)/tools/golden_check.o $(patsubst %,$(BUILD)/tests/test_%.o,layers parity adamw model)
$(GRADE)/obj/%.o: common/%.c
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) -fPIC -MMD -MP -c $< -o $@
# each test program's main renamed grade_main_<program>: tests/grade_main.c runs one by name
$(GRADE)/mains/%.o: $(BUILD)/tests/%.o
	@mkdir -p $(@D)
	objcopy --redefine-sym main=grade_main_$* $< $@
$(GRADE)/mains/golden_check.o: $(BUILD)/tools/golden_check.o
	@mkdir -p $(@D)
	objcopy --redefine-sym main=grade_main_golden_check $< $@
$(BUILD)/tests/grade_main.o: private CPPFLAGS += -Itests
grade-objects: $(patsubst common/%.c,$(GRADE)/obj/%.o,$(EXERCISE_SRC)) $(GRADE_PLAIN) \
               $(patsubst %.o,$(GRADE)/mains/%.o,$(notdir $(GRADE_MAINS))) $(BUILD)/tests/grade_main.o
# gold links a grading program in a third of ld's time (binutils has both)
GRADE_LD := $(if $(shell $(CC) -fuse-ld=gold -Wl,--version 2>/dev/null | grep -i gold),-fuse-ld=gold)
grade: grade-objects
	@GRADE_DIR=$(GRADE) GRADE_MAINS='$(BUILD)/tests/grade_main.o $(patsubst %.o,$(GRADE)/mains/%.o,$(notdir $(GRADE_MAINS)))' \
	    GRADE_LINK='$(CC) $(LDFLAGS) $(GRADE_LD) -rdynamic' GRADE_LIBS='$(LDLIBS) $(CHECK_LIBS) -ldl' \
	    GRADE_REFERENCE=$(if $(wildcard grade_reference),grade_reference,$(GRADE)/obj) GRADE_OBJS='$(GRADE_PLAIN)' \
	    scripts/grade.sh --times $(GRADE_FLAGS) $(if $(GRADE_STEP),--step $(GRADE_STEP)) $(EX)

# make data: CIFAR-10 into data/cifar-10-batches-bin
data:
	@sh scripts/get_cifar.sh
# make deps: the packages. oneDNN (libdnnl-dev) runs the model's products
# (common/nn/matmul.c), OpenBLAS LAPACK and the probe's. (hardening-deps: mk/hardening.mk;
# cluster-deps: mk/slurm.mk)
deps: PACKAGES = build-essential pkg-config libopenblas-openmp-dev liblapacke-dev check libcjson-dev \
                 libstb-dev gnuplot-nox zlib1g-dev graphviz libdnnl-dev
# As root it installs; as a user with sudo, through sudo; otherwise it says
# what to run as root and fails, so that `make deps && make tutorial` stops.
APT_INSTALL = apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq
deps hardening-deps cluster-deps:
	@if [ "$$(id -u)" = 0 ]; then $(APT_INSTALL) $(PACKAGES); \
	elif command -v sudo >/dev/null; then sudo sh -c '$(APT_INSTALL) $(PACKAGES)'; \
	else echo "make $@: run this as root:  apt-get install -y $(PACKAGES)"; exit 1; fi
clean:
	rm -rf $(BUILD) $(PROGRAMS)
