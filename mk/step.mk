# mk/step.mk: the Makefile of every step folder, in one place. A step folder's
# Makefile only names itself:
#     STEP := 3
#     NAME := step3_qknorm
#     include ../mk/step.mk
# then `make step3 && ./step3_qknorm` and `make check` work inside the folder.
# A program folder that is not a step (lab/) names its TARGET instead of a
# STEP, and may compile sources of another folder (EXTRA_SRC, EXTRA_HDR,
# EXTRA_CPPFLAGS).
ROOT := ..
# `make` alone builds the step's program (not the first rule of common.mk)
.DEFAULT_GOAL := all
include $(ROOT)/mk/common.mk

STEP_TEST_SRC := $(wildcard test_*.c)
STEP_TESTS := $(patsubst %.c,$(BUILD)/$(NAME)/%,$(STEP_TEST_SRC))
STEP_SRC := $(filter-out main.c $(STEP_TEST_SRC),$(wildcard *.c)) $(EXTRA_SRC)
STEP_HDR := $(wildcard *.h) $(EXTRA_HDR)
TARGET ?= step$(STEP)
CPPFLAGS += $(EXTRA_CPPFLAGS)

.PHONY: check clean all grade
all: $(TARGET)
ifneq ($(TARGET),$(NAME))
.PHONY: $(TARGET)
$(TARGET): $(NAME)
endif

$(NAME): main.c $(STEP_SRC) $(STEP_HDR) $(LIB)
	$(CC) $(CPPFLAGS) $(CFLAGS) main.c $(STEP_SRC) -o $@ $(LIB) $(LDFLAGS) $(LDLIBS)

$(BUILD)/$(NAME)/%: %.c $(STEP_SRC) $(STEP_HDR) $(wildcard $(ROOT)/tests/*.h) $(LIB)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) -I$(ROOT)/tests -I. $(CFLAGS) $< $(STEP_SRC) -o $@ $(LIB) $(LDFLAGS) $(LDLIBS) $(CHECK_LIBS)

# the tests may run the step's own program, so it is built first
check: $(NAME) $(STEP_TESTS)
	@set -e; for t in $(STEP_TESTS); do echo "== $$t"; $$t; done

# this step's exercises graded (docs/exercises.md; scripts/grade.sh)
grade:
	@$(MAKE) --no-print-directory -C $(ROOT) grade GRADE_STEP=$(STEP)

clean:
	rm -f $(NAME)
