// blas_kernel.c: see blas_kernel.h.
#include "blas_kernel.h"

#include <cblas.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

// The OpenBLAS kernel family that fits this CPU's instruction set, or NULL.
static const char *kernel_for_this_cpu(void) {
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f")) return "SkylakeX";
    if (__builtin_cpu_supports("avx2")) return "Haswell";
    return NULL;
}

void blas_use_fitting_kernel(char **argv) {
    if (getenv("OPENBLAS_CORETYPE")) return;
    const char *chosen = openblas_get_corename();
    const char *fitting = kernel_for_this_cpu();
    if (!chosen || !fitting || strcasecmp(chosen, "Prescott") != 0) return;
    setenv("OPENBLAS_CORETYPE", fitting, 1);
    execv("/proc/self/exe", argv);
    // no /proc: go on with the slow kernel, which computes the same products
}
