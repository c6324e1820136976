# mk/step.mk: every program folder's Makefile: make, check and grade there, by the root Makefile.
HERE := $(notdir $(CURDIR))
SHORT := $(firstword $(subst _, ,$(HERE)))
ROOT_MAKE = $(MAKE) --no-print-directory -C .. \
    $(if $(CIFAR_DIR),CIFAR_DIR=$(abspath $(CIFAR_DIR)))
.PHONY: all $(sort $(SHORT) $(HERE)) check grade clean
all $(sort $(SHORT) $(HERE)):
	@$(ROOT_MAKE) $(HERE)/$(HERE)
check:
	@$(ROOT_MAKE) check CHECK_DIRS=$(HERE)
grade:
	@$(ROOT_MAKE) grade GRADE_STEP=$(patsubst step%,%,$(filter step%,$(SHORT)))
clean:
	rm -f $(HERE)
