# mk/isa.mk: make isa-check, the golden and layer tests on the instruction
# sets and vector widths of other x86-64 machines, without owning them. The
# tests are built again for each level (build/isa/<name>/, the compiler's
# vectors) and run with each kernel family of oneDNN (the model's products)
# and OpenBLAS this CPU has; scripts/isa_check.sh prints every run's margins
# (tolerance / worst error). Not part of `make check`: a few minutes.
.PHONY: isa-check isa-programs
# The programs (scripts/isa_check.sh runs them), and what they link: the
# model (nn/), its files (io/), the golden and parity checks. A program that
# comes to need more fails to link here: add it to ISA_SRC.
ISA_PROGRAMS := golden_check test_parity test_layers test_model
ISA_SRC := $(wildcard common/nn/*.c common/io/*.c) common/eval/golden.c common/eval/parity.c
# make's own flags but the CPU: each build names its level
ISA_OPT := $(filter-out -march=%,$(OPT))
isa-check: $(addprefix $(BUILD)/tests/,$(ISA_PROGRAMS))
	@MAKE='$(MAKE)' ISA_OPT='$(ISA_OPT)' sh scripts/isa_check.sh $(BUILD)

# make isa-programs BUILD=build/isa/NAME OPT=...: the programs alone, in
# BUILD/bin (scripts/isa_check.sh asks for them).
isa-programs: $(addprefix $(BUILD)/bin/,$(ISA_PROGRAMS))
$(BUILD)/isa.a: $(call objects,$(ISA_SRC))
	@rm -f $@
	ar rcs $@ $^
$(BUILD)/bin/golden_check: $(BUILD)/tools/golden_check.o $(BUILD)/isa.a
	@mkdir -p $(@D)
	$(LINK)
$(BUILD)/bin/test_%: $(BUILD)/tests/test_%.o $(BUILD)/isa.a
	@mkdir -p $(@D)
	$(LINK) $(CHECK_LIBS)
