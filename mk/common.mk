# mk/common.mk: the one set of build rules. The root Makefile and every step
# folder's Makefile include it; ROOT says where the project root is.
ROOT ?= .
BUILD := $(ROOT)/build

# A relative CIFAR_DIR or TINYDIT_CACHE means: from the folder make was
# started in. Recipes run programs in other folders (cd step1_scorecard,
# make -C lab), so the programs get them absolute.
ifneq ($(strip $(CIFAR_DIR)),)
override export CIFAR_DIR := $(abspath $(CIFAR_DIR))
endif
ifneq ($(strip $(TINYDIT_CACHE)),)
override export TINYDIT_CACHE := $(abspath $(TINYDIT_CACHE))
endif

# gcc unless the command line or the environment names another compiler
ifeq ($(origin CC),default)
CC := gcc
endif
# -ffp-contract=fast lets gcc use fused multiply-adds (with -std=c11 it would not).
# -fno-trapping-math: nothing here reads floating-point exception flags, and
# without it gcc keeps every `a < b ? c : d` in fastmath.h as a branch (a
# comparison might trap), so the GELU, SiLU and softmax loops stay scalar.
# It changes no computed value, only whether the loops become vector code
# (docs/performance.md says how to see it in objdump's output).
OPT     ?= -O3 -march=native -ffp-contract=fast -fno-trapping-math
CFLAGS  ?= $(OPT) -g -std=c11 -Wall -Wextra -Wno-unused-parameter -fopenmp
CPPFLAGS += -D_GNU_SOURCE -I$(ROOT)/common -I/usr/include/stb -I/usr/include/cjson
LDFLAGS ?= -fopenmp
LDLIBS  += -ldnnl -lopenblas -llapacke -lcjson -lz -lm
CHECK_LIBS := $(shell pkg-config --libs check 2>/dev/null || echo -lcheck -lsubunit -lrt -lpthread -lm)

# Idle OpenMP threads wait passively (sleep) instead of spinning. On a machine
# shared with other work, a spinning thread steals the core its partner needs:
# measured here with two threads and a busy neighbour, a training step took
# 1,141 ms spinning and 362 ms passive. Every program started by make gets it;
# export it yourself when running the programs by hand on a busy machine.
export OMP_WAIT_POLICY ?= passive

# common/nn: the model the tutorial teaches; io, eval, train: what it stands on.
COMMON_SRC := $(wildcard $(ROOT)/common/*/*.c)
COMMON_HDR := $(wildcard $(ROOT)/common/*/*.h)
COMMON_OBJ := $(patsubst $(ROOT)/common/%.c,$(BUILD)/common/%.o,$(COMMON_SRC))
LIB := $(BUILD)/libtinydit.a

$(BUILD)/common/%.o: $(ROOT)/common/%.c $(COMMON_HDR)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) -c $< -o $@

$(LIB): $(COMMON_OBJ)
	@rm -f $@
	ar rcs $@ $^

# A test program: one Check suite per file, tests/test_NAME.c or stepN/test_*.c
$(BUILD)/tests/%: $(ROOT)/tests/%.c $(wildcard $(ROOT)/tests/*.h) $(LIB)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) -I$(ROOT)/tests $(CFLAGS) $< -o $@ $(LIB) $(LDFLAGS) $(LDLIBS) $(CHECK_LIBS)
