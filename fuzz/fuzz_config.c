// fuzz/fuzz_config.c: the libFuzzer entry point of the config target; the work is
// done by fuzz_config_one in harness.h. Built and run by `make fuzz`.
#include "harness.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    fuzz_config_one(data, size);
    return 0;
}
