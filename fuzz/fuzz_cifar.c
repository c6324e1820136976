// fuzz/fuzz_cifar.c: the libFuzzer entry point of the cifar target; the work is
// done by fuzz_cifar_one in harness.h. Built and run by `make fuzz`.
#include "harness.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    fuzz_cifar_one(data, size);
    return 0;
}
