// fuzz/fuzz_safetensors.c: the libFuzzer entry point of the safetensors target; the work is
// done by fuzz_safetensors_one in harness.h. Built and run by `make fuzz`.
#include "harness.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    fuzz_safetensors_one(data, size);
    return 0;
}
