# TinyDiT in C: the targets you can ask for (README.md); mk/common.mk builds them.
.DEFAULT_GOAL := all
# Where runs go, absolute: programs start in other folders.
override RUNS := $(abspath $(or $(RUNS),runs))
include mk/common.mk mk/hardening.mk mk/plots.mk mk/isa.mk mk/slurm.mk
.PHONY: all tools lab $(STEP_TARGETS) check golden golden-files layer-files replay exercises grade grade-objects data deps clean
all: $(LIB) $(TESTS) $(BUILD)/tests/golden_check tools $(STEP_TARGETS) lab
tools: $(TOOLS)
$(foreach s,$(STEPS),$(eval $(firstword $(subst _, ,$(s))): $(s)/$(s)))
lab: lab/lab
# Programs that run others: the lab and its tests (and scripts/results.sh), some tests.
lab/lab $(BUILD)/tests/test_faults: | step6_ablation/step6_ablation
$(call tests_in,lab): | step1_scorecard/step1_scorecard
$(BUILD)/tests/test_shipped_model: | step0_tour/step0_tour
$(BUILD)/tests/test_trainer: | $(BUILD)/tools/trace_steps
# make check: each test program in its folder (CHECK_DIRS), CHECK_SKIP=test_x left out, KEEP_GOING=yes
# past a failure, TINYDIT_NO_SKIPS=1 (or cifar,gnuplot,...) failing a skip; CHECK_LOG summed up.
CHECK_DIRS ?= tests $(PROGRAM_DIRS)
CHECK_TESTS = $(filter-out $(addprefix %/,$(CHECK_SKIP)),$(foreach d,$(CHECK_DIRS),$(call tests_in,$(d))))
CHECK_LOG := $(CURDIR)/$(BUILD)/check.log
check: $(if $(filter tests,$(CHECK_DIRS)),all grade-objects,$(CHECK_TESTS) $(foreach d,$(CHECK_DIRS),$(d)/$(d)))
	@KEEP_GOING=$(KEEP_GOING) sh scripts/check.sh $(BUILD) $(CHECK_LOG) $(CHECK_TESTS)
# make golden: the C model against GOLDEN_DIR's files; golden-files and layer-files write them.
GOLDEN_DIR ?= tests/golden
golden: $(BUILD)/tests/golden_check
	$(BUILD)/tests/golden_check $(GOLDEN_DIR)
TORCH_PYTHON = $(firstword $(foreach p,python3 /usr/bin/python3,$(shell $(p) -c 'import torch' 2>/dev/null && echo $(p))))
NEED_TORCH = @if [ -z "$(TORCH_PYTHON)" ]; then printf '%s\n' "make $@: PyTorch is not installed (no python3 \
	can import torch)." "Install it with:  apt-get install python3-torch"; exit 1; fi
golden-files:
	$(NEED_TORCH)
	$(TORCH_PYTHON) tools/tinydit_ref.py golden $(GOLDEN_DIR)
layer-files:
	$(NEED_TORCH)
	$(TORCH_PYTHON) tools/tinydit_ref.py layers $(GOLDEN_DIR)/layers
# make replay [SET="--set pos=rope2d"]: a run's first TRACE_STEPS steps replayed in PyTorch.
TRACE_STEPS ?= 100
TRACE ?= $(RUNS)/trace.safetensors
replay: $(BUILD)/tools/trace_steps
	$(NEED_TORCH)
	@mkdir -p $(dir $(TRACE))
	$(BUILD)/tools/trace_steps --preset $(PRESET) --steps $(TRACE_STEPS) $(SET) $(TRACE)
	$(TORCH_PYTHON) tools/torch_train.py replay $(TRACE)
# make exercises: a workbook of stubs (docs/exercises.md); make grade [EX=name]: each graded alone, the files
# with exercises compiled again, position-independent: the reference's functions stand in for the others.
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
$(foreach o,$(GRADE_MAINS),$(eval $(GRADE)/mains/$(notdir $(o)): $(o)))
$(GRADE)/mains/%.o:
	@mkdir -p $(@D)
	objcopy --redefine-sym main=grade_main_$* $^ $@
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
data:
	@sh scripts/get_cifar.sh
# oneDNN runs the model's products (common/nn/matmul.c); OpenBLAS, LAPACK and the probe's.
deps: PACKAGES = build-essential pkg-config libopenblas-openmp-dev liblapacke-dev check libcjson-dev \
                 libstb-dev gnuplot-nox zlib1g-dev graphviz libdnnl-dev
deps hardening-deps cluster-deps:
	@sh scripts/apt_install.sh $@ $(PACKAGES)
clean:
	rm -rf $(BUILD) $(PROGRAMS)
