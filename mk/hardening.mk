# mk/hardening.mk: checks for bugs the tests do not ask about, minutes each (docs/hardening.md).
.PHONY: sanitize valgrind fuzz hardening-deps
SAN_FLAGS := -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer
# make sanitize: make check under ASan, UBSan and LSan in a copy (sanitized programs must not replace ours)
SAN_DIR := $(BUILD)/sanitize
SAN_ENV := ASAN_OPTIONS=exitcode=86:halt_on_error=1:detect_leaks=1:abort_on_error=0:strict_string_checks=1:detect_stack_use_after_return=1 \
           UBSAN_OPTIONS=exitcode=87:halt_on_error=1:print_stacktrace=1 \
           LSAN_OPTIONS=suppressions=$(CURDIR)/mk/lsan.supp:print_suppressions=0 \
           CK_TIMEOUT_MULTIPLIER=10 TINYDIT_FUZZ_CONFIGS=250 TINYDIT_DOCS_NO_RUN=1
sanitize:
	@rm -rf $(SAN_DIR)/src && mkdir -p $(SAN_DIR)/src
	@git ls-files -z --cached --others --exclude-standard \
	    | tar --null -T - --ignore-failed-read -cf - | tar -C $(SAN_DIR)/src -xf -
	@if [ -d data ]; then ln -s $(CURDIR)/data $(SAN_DIR)/src/data; fi
	@echo "make sanitize: make check in $(SAN_DIR)/src with $(SAN_FLAGS)"
	$(SAN_ENV) $(MAKE) --no-print-directory -C $(SAN_DIR)/src check CHECK_SKIP=test_tutorial KEEP_GOING=yes \
	    OPT="-O1 -g $(SAN_FLAGS)" LDFLAGS="-fopenmp $(SAN_FLAGS)"
	@echo "make sanitize: OK, no AddressSanitizer, UndefinedBehaviorSanitizer or LeakSanitizer finding"
# make valgrind: step 6 built apart at -O1 without -march=native, trained under memcheck.
VG_DIR := $(CURDIR)/$(BUILD)/valgrind
VG_ARGS ?= --preset smoke --no-scorecard --set threads=1 --set steps=4 --ckpt-every 2
VG_OBJ := $(patsubst %.c,$(VG_DIR)/%.o,$(call sources,step6_ablation)) $(VG_DIR)/libtinydit.a
valgrind:
	@$(MAKE) --no-print-directory BUILD=$(VG_DIR) OPT="-O1 -g" $(VG_OBJ)
	$(CC) $(LDFLAGS) $(VG_OBJ) -o $(VG_DIR)/step6_ablation/step6_ablation $(LDLIBS)
	sh scripts/valgrind.sh $(VG_DIR)/step6_ablation/step6_ablation $(VG_DIR) $(VG_ARGS)
# make fuzz: fuzz/'s targets with libFuzzer, ASan and UBSan, each for FUZZ_SECONDS.
FUZZ_CC ?= clang
FUZZ_SECONDS ?= 60
FUZZ_TARGETS ?= safetensors cifar config
FUZZ_FLAGS := -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined
FUZZ_LIB := $(patsubst %,$(BUILD)/fuzz/common/%.o,io/safetensors io/fileio io/config_parse io/run_config \
              nn/config io/cifar train/dataloader nn/rng nn/errors io/args io/paths)
FUZZ_BINS := $(patsubst %,$(BUILD)/fuzz/fuzz_%,$(FUZZ_TARGETS))
$(BUILD)/fuzz/%.o: %.c
	@mkdir -p $(@D)
	$(FUZZ_CC) $(CPPFLAGS) $(FUZZ_FLAGS) -std=c11 -Wall -Wextra -MMD -MP -c $< -o $@
$(FUZZ_BINS): $(BUILD)/fuzz/%: $(BUILD)/fuzz/fuzz/%.o $(FUZZ_LIB)
	$(FUZZ_CC) $(FUZZ_FLAGS) $^ -o $@ -lcjson -lm
# the config target's dictionary: fuzz/config.dict's words, then every key and enum name
$(BUILD)/fuzz/config.dict: fuzz/config.dict fuzz/config_words.c $(LIB)
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) fuzz/config_words.c $(LIB) -o $(BUILD)/fuzz/config_words $(LDFLAGS) $(LDLIBS)
	{ cat fuzz/config.dict; $(BUILD)/fuzz/config_words; } >$@
fuzz: $(FUZZ_BINS) $(BUILD)/fuzz/config.dict
	sh scripts/fuzz.sh $(BUILD)/fuzz $(FUZZ_SECONDS) $(FUZZ_TARGETS)

hardening-deps: PACKAGES = clang libclang-rt-14-dev valgrind
