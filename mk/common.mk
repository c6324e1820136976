# mk/common.mk: how sources become programs: each .c compiles once, to build/ under its own path.
BUILD := build
# CIFAR_DIR relative to where make started: absolute for programs started elsewhere
$(if $(strip $(CIFAR_DIR)),$(eval override export CIFAR_DIR := $(abspath $(CIFAR_DIR))))
CC := $(if $(filter default,$(origin CC)),gcc,$(CC))
# fused multiply-adds; no trapping comparisons or errno, so the GELU, SiLU, softmax and
# AdamW loops vectorise, rounding the same (docs/performance.md)
OPT     ?= -O3 -march=native -ffp-contract=fast -fno-trapping-math -fno-math-errno
CFLAGS  ?= $(OPT) -g -std=c11 -Wall -Wextra -Wno-unused-parameter -Werror=incompatible-pointer-types -fopenmp
CPPFLAGS += -D_GNU_SOURCE -Icommon -I/usr/include/stb -I/usr/include/cjson
LDFLAGS ?= -fopenmp
LDLIBS  += -ldnnl -lopenblas -llapacke -lcjson -lz -lm
CHECK_LIBS := $(shell pkg-config --libs check 2>/dev/null || echo -lcheck -lsubunit -lrt -lpthread -lm)
# idle OpenMP threads sleep: a spinning one steals a shared machine's core (io/blas_kernel.h)
export OMP_WAIT_POLICY ?= passive
COMMON_SRC := $(sort $(shell find common -name '*.c'))
objects = $(patsubst %.c,$(BUILD)/%.o,$(1))
LIB := $(BUILD)/libtinydit.a
$(LIB): $(call objects,$(COMMON_SRC)) $(BUILD)/libtinydit.members
	rm -f $@ && ar rcs $@ $(filter %.o,$^)
# rewritten when a source comes or goes: the library is made again without a removed file's object
$(BUILD)/libtinydit.members: FORCE
	@mkdir -p $(@D) && echo '$(COMMON_SRC)' | cmp -s - $@ || echo '$(COMMON_SRC)' > $@
.PHONY: FORCE
$(BUILD)/%.o: %.c
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) -MMD -MP -c $< -o $@
LINK = $(CC) $(LDFLAGS) $^ -o $@ $(LDLIBS)
# A program folder D makes D/D; its tests link the same objects but main.o. tests/, tools/: a file a program.
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
TESTS := $(foreach d,tests $(PROGRAM_DIRS),$(call tests_in,$(d)))
$(TESTS:=.o): private CPPFLAGS += -Itests
$(TESTS): private LDLIBS += $(CHECK_LIBS)
# what each object includes (not sanitize's or isa-check's builds: they read their own)
-include $(shell find $(BUILD) \( -path $(BUILD)/sanitize -o -path $(BUILD)/isa \) -prune -o -name '*.d' -print 2>/dev/null)
