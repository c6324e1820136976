# TinyDiT in C. `make` builds everything, `make check` runs every test.
# See README.md for the tour; mk/common.mk holds the shared rules.
ROOT := .
include mk/common.mk
include mk/data.mk
-include mk/hardening.mk

STEPS := $(sort $(wildcard step[0-9]_*))
TEST_SRC := $(wildcard tests/test_*.c)
TESTS := $(patsubst tests/%.c,$(BUILD)/tests/%,$(TEST_SRC))
GOLDEN_DIR ?= ../shared/golden

.PHONY: all lib check golden clean deps tests tools $(STEP_TARGETS)
# step1_scorecard -> step1, step2_rmsnorm -> step2, ...
STEP_TARGETS := $(foreach s,$(STEPS),$(firstword $(subst _, ,$(s))))
all: lib tests tools $(STEP_TARGETS)
lib: $(LIB)
tests: $(TESTS)

# make check: the library's tests, then each step folder's tests.
check: $(TESTS)
	@set -e; for t in $(TESTS); do echo "== $$t"; $$t; done
	@set -e; for s in $(STEPS); do $(MAKE) --no-print-directory -C $$s check; done

golden: $(BUILD)/tests/golden_check
	$(BUILD)/tests/golden_check $(GOLDEN_DIR)

$(BUILD)/tests/golden_check: tools/golden_check.c $(LIB)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) $< -o $@ $(LIB) $(LDFLAGS) $(LDLIBS)

# small tools: build/tools/train_probe (trains or loads the cached probe) ...
TOOLS := $(patsubst tools/%.c,$(BUILD)/tools/%,$(filter-out tools/golden_check.c,$(wildcard tools/*.c)))
tools: $(TOOLS)
$(BUILD)/tools/%: tools/%.c $(LIB)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) $< -o $@ $(LIB) $(LDFLAGS) $(LDLIBS)

# make step3 (from the root) builds step3_qknorm/step3_qknorm, and so on.
$(STEP_TARGETS): lib
	$(MAKE) --no-print-directory -C $(wildcard $@_*) $@

DEB_PACKAGES := build-essential pkg-config libopenblas-openmp-dev liblapacke-dev check \
                libcjson-dev libstb-dev gnuplot-nox
deps:
	@if [ "$$(id -u)" = 0 ]; then apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $(DEB_PACKAGES); \
	else echo "run as root:  apt-get install -y $(DEB_PACKAGES)"; fi

clean:
	rm -rf $(BUILD)
	@for s in $(STEPS); do $(MAKE) --no-print-directory -C $$s clean; done
