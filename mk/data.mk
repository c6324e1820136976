# mk/data.mk: `make data` downloads CIFAR-10 into data/cifar-10-batches-bin
# (scripts/get_cifar.sh: progress bar, md5 check of the archive, and without
# a network a message on how to point CIFAR_DIR at an existing copy).
# Included from the root Makefile; ROOT comes from mk/common.mk.
.PHONY: data
data:
	@sh $(ROOT)/scripts/get_cifar.sh
