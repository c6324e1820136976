# mk/hardening.mk: the checks that look for bugs the tests do not ask about.
# Included from the root Makefile; docs/hardening.md tells what each finds.
#
#   make sanitize                 all of `make check` under AddressSanitizer
#                                 + UndefinedBehaviorSanitizer
#   make valgrind                 a smoke training and its --resume under
#                                 valgrind memcheck
#   make fuzz [FUZZ_SECONDS=60] [FUZZ_TARGETS="safetensors cifar config"]
#                                 libFuzzer on the three parsers of untrusted
#                                 bytes, one target after the other
#   make hardening-deps           apt-get the tools these need (root)
#
# None of them is part of `make check`: they take minutes and need clang and
# valgrind. What `make check` does get: the fault tests
# (tests/test_faults.c) and the replay of the fuzz corpus and of
# every input that once crashed (tests/test_fuzz_corpus.c).

.PHONY: sanitize valgrind valgrind-build fuzz fuzz-build hardening-deps

SAN_FLAGS := -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer

# ---------------------------------------------------------------------------
# make sanitize
#
# `make check` with the sanitizers, in a copy of the project's files
# (build/sanitize/src: the tracked and new files, without build/, runs/ or
# data/). Not a second BUILD dir in place: mk/step.mk puts each program in
# its own folder (step6_ablation/step6_ablation), where the tests and the
# docs run it, so a sanitized build in place would replace the normal
# programs. Sanitizer reports name files under build/sanitize/src/.
# test_tutorial is left out (CHECK_SKIP): it builds a copy of its own and
# trains in it, which under the sanitizers takes far longer and finds
# nothing the step tests miss.
#
# Runtime options (ASan/UBSan/LSan read them from the environment; the fault
# tests fork the programs, which inherit them):
#   exitcode=86       a sanitizer finding must not look like one of the
#                     programs' own exit codes (1 = TRAIN_ERROR, 3, 4 ...)
#   halt_on_error     halt at the first finding, with a stack
#   detect_leaks=1    LeakSanitizer, with mk/lsan.supp (see there: what is
#                     suppressed and why)
# and CK_TIMEOUT_MULTIPLIER=10: Check's per-test timeouts are set for normal
# speed; ASan and UBSan make the numeric tests 2-5 times slower.
# TINYDIT_FUZZ_CONFIGS=250: tests/test_config_fuzz.c trains and reloads 250
# random valid configurations (40 in a plain `make check`), so that every
# shape the fuzzer draws runs its forward, backward, checkpoint and the
# trainer's checks under the sanitizers.
# TINYDIT_DOCS_NO_RUN=1: the docs' <!-- run --> blocks build a program with
# the project's plain flags, which cannot link the sanitized library; the
# plain `make check` runs them.
SAN_DIR := $(BUILD)/sanitize
SAN_ENV := ASAN_OPTIONS=exitcode=86:halt_on_error=1:detect_leaks=1:abort_on_error=0:strict_string_checks=1:detect_stack_use_after_return=1 \
           UBSAN_OPTIONS=exitcode=87:halt_on_error=1:print_stacktrace=1 \
           LSAN_OPTIONS=suppressions=$(abspath $(ROOT)/mk/lsan.supp):print_suppressions=0 \
           CK_TIMEOUT_MULTIPLIER=10 TINYDIT_FUZZ_CONFIGS=250 TINYDIT_DOCS_NO_RUN=1
SAN_MAKEVARS := OPT="-O1 -g $(SAN_FLAGS)" LDFLAGS="-fopenmp $(SAN_FLAGS)"

sanitize:
	@rm -rf $(SAN_DIR)/src && mkdir -p $(SAN_DIR)/src
	@cd $(ROOT) && git ls-files -z --cached --others --exclude-standard \
	    | tar --null -T - --ignore-failed-read -cf - | tar -C $(abspath $(SAN_DIR))/src -xf -
	@# the probe classifier's cache, copied rather than shared (a probe trained
	@# by the sanitized build must not land in the real cache); CIFAR-10 linked
	@if [ -d $(ROOT)/runs/.cache ]; then mkdir -p $(SAN_DIR)/src/runs && cp -r $(ROOT)/runs/.cache $(SAN_DIR)/src/runs/; fi
	@if [ -d $(ROOT)/data ]; then ln -s $(abspath $(ROOT)/data) $(SAN_DIR)/src/data; fi
	@echo "make sanitize: make check in $(SAN_DIR)/src with $(SAN_FLAGS)"
	$(SAN_ENV) $(MAKE) --no-print-directory -C $(SAN_DIR)/src check $(SAN_MAKEVARS) CHECK_SKIP=test_tutorial
	@echo "make sanitize: OK, no AddressSanitizer, UndefinedBehaviorSanitizer or LeakSanitizer finding"

# ---------------------------------------------------------------------------
# make valgrind
#
# memcheck: --error-exitcode=99 makes any invalid read or write, use of an
# uninitialised value or "definitely lost" block fail the run.
# A separate build of step6_ablation without -march=native: this machine
# has AVX-512, which valgrind cannot run. The library is built by the same
# rules as always, in its own BUILD dir with OPT overridden (a command-line
# BUILD beats the `:=` of mk/common.mk), and linked like mk/step.mk links
# the program, so nothing mixes with the normal objects. One thread
# (OMP_NUM_THREADS=1, threads=1): valgrind runs threads one at a time
# anyway, and libgomp's pool would only add noise. OpenBLAS picks its
# kernels from CPUID; OPENBLAS_CORETYPE=Haswell keeps it on AVX2 ones.
VG_DIR := $(abspath $(BUILD))/valgrind
VG_BIN := $(VG_DIR)/step6_ablation
VG_SRC := $(filter-out $(ROOT)/step6_ablation/test_%.c $(ROOT)/step6_ablation/main.c,$(wildcard $(ROOT)/step6_ablation/*.c))
# Two runs of the smoke model, cut to 4 steps (a step takes about 20 s under
# memcheck): a fresh one stopped at step 2 with a checkpoint (exit 4), then
# --resume to the end (exit 0), so saving and loading are both checked.
VG_ARGS ?= --preset smoke --no-scorecard --set threads=1 --set steps=4 --ckpt-every 2

valgrind-build:
	@$(MAKE) --no-print-directory BUILD=$(VG_DIR) OPT="-O1 -g" $(VG_DIR)/libtinydit.a
	$(CC) $(CPPFLAGS) -I$(ROOT)/step6_ablation -O1 -g -std=c11 -Wall -Wextra -Wno-unused-parameter -fopenmp \
	    $(ROOT)/step6_ablation/main.c $(VG_SRC) -o $(VG_BIN) $(VG_DIR)/libtinydit.a -fopenmp $(LDLIBS)

valgrind: valgrind-build
	@command -v valgrind >/dev/null || { echo "make valgrind: valgrind not found (make hardening-deps)"; exit 1; }
	@out=$$(mktemp -d); fail=0; \
	for phase in "fresh 4 --stop-after 2" "resume 0 --resume"; do \
	    set -- $$phase; name=$$1; want=$$2; shift 2; log=$(VG_DIR)/valgrind-$$name.log; \
	    echo "== make valgrind ($$name): step6_ablation train $(VG_ARGS) $$* (log: $$log)"; \
	    rc=0; OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 OPENBLAS_CORETYPE=Haswell \
	    valgrind --tool=memcheck --error-exitcode=99 --leak-check=full \
	        --errors-for-leak-kinds=definite --show-leak-kinds=definite --num-callers=30 \
	        $(VG_BIN) train --name valgrind $(VG_ARGS) --out $$out "$$@" >$$log 2>&1 || rc=$$?; \
	    grep -E "ERROR SUMMARY|definitely lost|in use at exit|All heap blocks were freed|resuming|trained|stop" $$log \
	        | grep -v " step [0-9]" | sed 's/^==[0-9]*== //'; \
	    if [ $$rc -ne $$want ]; then echo "make valgrind ($$name): FAILED: exit $$rc, expected $$want; see $$log"; fail=1; fi; \
	done; rm -rf $$out; \
	if [ $$fail -ne 0 ]; then exit 1; fi; echo "make valgrind: OK"

# ---------------------------------------------------------------------------
# make fuzz
#
# libFuzzer with ASan + UBSan (clang). Each target starts from its committed
# seeds in fuzz/corpus/<target>/ and keeps what it learns in
# fuzz/out/<target>/corpus (not committed). A crash stops the run, leaves
# fuzz/out/<target>/crash-<sha1>, and fails make: copy that file into
# fuzz/regressions/<target>/ and fix the bug; tests/test_fuzz_corpus.c then
# replays it in every `make check`.
FUZZ_CC ?= clang
FUZZ_SECONDS ?= 60
FUZZ_TARGETS ?= safetensors cifar config
FUZZ_FLAGS := -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined
FUZZ_LIB_SRC := $(addprefix $(ROOT)/common/,io/safetensors.c io/fileio.c io/config_parse.c io/run_config.c nn/config.c io/cifar.c train/dataloader.c nn/rng.c nn/errors.c io/args.c io/paths.c)
# -max_len: cifar up to 4 records and the control byte; a --set line is short.
# fuzz/<target>.dict, where there is one, gives libFuzzer the words of the
# format (keys, enum names, JSON keys) and the numbers at the edges of int,
# uint64 and float, which random byte flips almost never spell in decimal.
FUZZ_BINS := $(patsubst %,$(BUILD)/fuzz/fuzz_%,$(FUZZ_TARGETS))

$(BUILD)/fuzz/fuzz_%: $(ROOT)/fuzz/fuzz_%.c $(ROOT)/fuzz/harness.h $(FUZZ_LIB_SRC) $(COMMON_HDR)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(CPPFLAGS) $(FUZZ_FLAGS) -std=c11 -Wall -Wextra $< $(FUZZ_LIB_SRC) -o $@ -lcjson -lm

fuzz-build: $(FUZZ_BINS)

fuzz: $(FUZZ_BINS)
	@set -e; for t in $(FUZZ_TARGETS); do \
	    mkdir -p $(ROOT)/fuzz/out/$$t/corpus; log=$(ROOT)/fuzz/out/$$t.log; \
	    echo "== fuzz $$t for $(FUZZ_SECONDS) s (log: $$log)"; \
	    case $$t in cifar) maxlen=12300;; config) maxlen=1024;; *) maxlen=4096;; esac; \
	    dict=; if [ -f $(ROOT)/fuzz/$$t.dict ]; then dict=-dict=$(ROOT)/fuzz/$$t.dict; fi; \
	    rc=0; $(BUILD)/fuzz/fuzz_$$t -max_total_time=$(FUZZ_SECONDS) -print_final_stats=1 \
	        -max_len=$$maxlen -timeout=10 -rss_limit_mb=2048 $$dict \
	        -artifact_prefix=$(ROOT)/fuzz/out/$$t/ \
	        $(ROOT)/fuzz/out/$$t/corpus $(ROOT)/fuzz/corpus/$$t >$$log 2>&1 || rc=$$?; \
	    grep -E "INITED|DONE|stat::number_of_executed_units|stat::average_exec_per_sec|stat::peak_rss_mb" $$log || true; \
	    if [ $$rc -ne 0 ]; then tail -40 $$log; echo "fuzz $$t: FAILED (exit $$rc): see $$log and fuzz/out/$$t/"; exit 1; fi; \
	done

# ---------------------------------------------------------------------------
HARDENING_PACKAGES := clang libclang-rt-14-dev valgrind
hardening-deps:
	@if [ "$$(id -u)" = 0 ]; then $(APT_INSTALL) $(HARDENING_PACKAGES); \
	elif command -v sudo >/dev/null; then sudo sh -c '$(APT_INSTALL) $(HARDENING_PACKAGES)'; \
	else echo "make hardening-deps: run this as root:  apt-get install -y $(HARDENING_PACKAGES)"; exit 1; fi
