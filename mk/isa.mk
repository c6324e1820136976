# mk/isa.mk: make isa-check, the golden and layer tests at each x86-64 level and kernel family (scripts/isa_check.sh)
.PHONY: isa-check isa-programs
# what they link; a program that comes to need more fails to link here: add it to ISA_SRC
ISA_PROGRAMS := golden_check test_parity test_layers test_model
ISA_SRC := $(wildcard common/nn/*.c common/io/*.c) common/eval/golden.c common/eval/parity.c
ISA_OPT := $(filter-out -march=%,$(OPT))
isa-check: $(addprefix $(BUILD)/tests/,$(ISA_PROGRAMS))
	@MAKE='$(MAKE)' ISA_OPT='$(ISA_OPT)' sh scripts/isa_check.sh $(BUILD)
# make isa-programs BUILD=build/isa/NAME OPT=...: the programs alone, in BUILD/bin
isa-programs: $(addprefix $(BUILD)/bin/,$(ISA_PROGRAMS))
$(BUILD)/isa.a: $(call objects,$(ISA_SRC))
	rm -f $@ && ar rcs $@ $^
$(BUILD)/bin/golden_check: $(BUILD)/tools/golden_check.o $(BUILD)/isa.a
$(foreach p,$(filter test_%,$(ISA_PROGRAMS)),$(eval $(BUILD)/bin/$(p): $(BUILD)/tests/$(p).o $(BUILD)/isa.a))
$(addprefix $(BUILD)/bin/,$(ISA_PROGRAMS)):
	@mkdir -p $(@D)
	$(LINK) $(CHECK_LIBS)
