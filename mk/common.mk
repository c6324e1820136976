# mk/common.mk: how sources become programs (included by the root Makefile).
# Each .c compiles once, to build/ under its own path (common/nn/model.c ->
# build/common/nn/model.o) with a .d file naming the headers it includes.
BUILD := build
# A relative CIFAR_DIR or TINYDIT_CACHE means: from where make started; the
# programs, started in other folders, get them absolute.
$(foreach v,CIFAR_DIR TINYDIT_CACHE,$(if $(strip $($(v))),$(eval override export $(v) := $(abspath $($(v))))))
# gcc unless the command line or the environment names another compiler
CC := $(if $(filter default,$(origin CC)),gcc,$(CC))
# -ffp-contract=fast lets gcc use fused multiply-adds (with -std=c11 it would not).
# -fno-trapping-math: nothing reads floating-point exception flags; without it
# gcc keeps every `a < b ? c : d` in fastmath.h a branch (a comparison might
# trap), so the GELU, SiLU and softmax loops stay scalar (docs/performance.md).
# -fno-math-errno: nothing reads errno after sqrtf; without it AdamW's loop
# stays scalar (sqrtf may set errno). The square root rounds the same.
OPT     ?= -O3 -march=native -ffp-contract=fast -fno-trapping-math -fno-math-errno
CFLAGS  ?= $(OPT) -g -std=c11 -Wall -Wextra -Wno-unused-parameter -Werror=incompatible-pointer-types -fopenmp
CPPFLAGS += -D_GNU_SOURCE -Icommon -I/usr/include/stb -I/usr/include/cjson
LDFLAGS ?= -fopenmp
LDLIBS  += -ldnnl -lopenblas -llapacke -lcjson -lz -lm
CHECK_LIBS := $(shell pkg-config --libs check 2>/dev/null || echo -lcheck -lsubunit -lrt -lpthread -lm)

# Idle OpenMP threads sleep instead of spinning: on a shared machine a spinning
# thread steals the core its partner needs, slowing a step several times. The
# programs that train set it themselves (restart_fitted, common/io/blas_kernel.h);
# here, for the tests and tools make starts.
export OMP_WAIT_POLICY ?= passive
# common/: the library, every .c of every folder in it (a new one needs no edit).
COMMON_SRC := $(sort $(shell find common -name '*.c'))
objects = $(patsubst %.c,$(BUILD)/%.o,$(1))
LIB := $(BUILD)/libtinydit.a
$(LIB): $(call objects,$(COMMON_SRC)) $(BUILD)/libtinydit.members
	@rm -f $@
	ar rcs $@ $(filter %.o,$^)
# the library's list of sources, rewritten when one comes or goes, so that
# the library is made again without the object of a file that left common/
$(BUILD)/libtinydit.members: FORCE
	@mkdir -p $(@D)
	@echo '$(COMMON_SRC)' | cmp -s - $@ || echo '$(COMMON_SRC)' > $@
.PHONY: FORCE
$(BUILD)/%.o: %.c
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) -MMD -MP -c $< -o $@
LINK = $(CC) $(LDFLAGS) $^ -o $@ $(LDLIBS)
# A program folder D (a step, or lab/) makes D/D from its .c files but the
# tests; its test build/D/test_X links test_X.o and the same objects but
# main.o, after D/D (tests may run it). tests/ and tools/: one file a program.
sources = $(filter-out $(1)/test_%.c,$(wildcard $(1)/*.c))
tests_in = $(patsubst %.c,$(BUILD)/%,$(wildcard $(1)/test_*.c))
STEPS := $(sort $(wildcard step[0-9]_*))
STEP_TARGETS := $(foreach s,$(STEPS),$(firstword $(subst _, ,$(s))))
PROGRAM_DIRS := $(STEPS) lab
define program_folder
$(1)/$(1): $(call objects,$(call sources,$(1))) $(LIB)
	$$(LINK)
$(call tests_in,$(1)): $(BUILD)/$(1)/%: $(BUILD)/$(1)/%.o $(call objects,$(filter-out $(1)/main.c,$(call sources,$(1)))) $(LIB) | $(1)/$(1)
	$$(LINK)
endef
$(foreach d,$(PROGRAM_DIRS),$(eval $(call program_folder,$(d))))
PROGRAMS := $(foreach d,$(PROGRAM_DIRS),$(d)/$(d))
TOOLS := $(patsubst %.c,$(BUILD)/%,$(filter-out tools/golden_check.c,$(wildcard tools/*.c)))
$(TOOLS) $(call tests_in,tests): $(BUILD)/%: $(BUILD)/%.o $(LIB)
	$(LINK)
$(BUILD)/tests/golden_check: $(BUILD)/tools/golden_check.o $(LIB)
	$(LINK)
# The tests (Check suites) see tests/testutil.h and link Check.
TESTS := $(foreach d,tests $(PROGRAM_DIRS),$(call tests_in,$(d)))
$(TESTS:=.o): private CPPFLAGS += -Itests
$(TESTS): private LDLIBS += $(CHECK_LIBS)
# what each object includes (not make sanitize's copy or make isa-check's builds: they read their own)
-include $(shell find $(BUILD) \( -path $(BUILD)/sanitize -o -path $(BUILD)/isa \) -prune -o -name '*.d' -print 2>/dev/null)
