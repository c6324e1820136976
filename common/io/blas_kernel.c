// blas_kernel.c: see blas_kernel.h.
#include "blas_kernel.h"

#include <cblas.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

// Vector widths as ranks: 3 AVX-512, 2 AVX2, 1 AVX, 0 SSE.
static const char *const RANK_NAME[4] = { "SSE", "AVX", "AVX2", "AVX-512" };

static int cpu_vector_rank(void) {
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f")) return 3;
    if (__builtin_cpu_supports("avx2")) return 2;
    return __builtin_cpu_supports("avx") ? 1 : 0;
}

// The OpenBLAS kernel family that fits this CPU's instruction set, or NULL.
static const char *kernel_for_this_cpu(void) {
    static const char *const fitting[4] = { NULL, NULL, "Haswell", "SkylakeX" };
    return fitting[cpu_vector_rank()];
}

// The rank of an OpenBLAS kernel family, by its name (openblas_get_corename).
static int kernel_vector_rank(const char *core) {
    static const struct { const char *name; int rank; } families[] = {
        { "SkylakeX", 3 }, { "Cooperlake", 3 }, { "SapphireRapids", 3 }, { "Haswell", 2 }, { "Zen", 2 },
        { "Excavator", 2 }, { "Sandybridge", 1 }, { "Bulldozer", 1 }, { "Piledriver", 1 }, { "Steamroller", 1 },
    };
    for (size_t i = 0; core && i < sizeof families / sizeof *families; i++)
        if (!strcasecmp(core, families[i].name)) return families[i].rank;
    return 0;
}

void blas_kernel_describe(char *line, size_t cap) {
    const char *core = openblas_get_corename(), *set = getenv("OPENBLAS_CORETYPE");
    char name[32] = "OpenBLAS", version[32] = "";   // openblas_get_config(): "OpenBLAS 0.3.21 NO_LAPACKE ..."
    sscanf(openblas_get_config(), "%31s %31s", name, version);
    int cpu = cpu_vector_rank(), kernel = kernel_vector_rank(core);
    if (set && kernel < cpu)
        snprintf(line, cap, "%s %s, its %s kernels: OPENBLAS_CORETYPE=%s holds it to %s on a CPU with %s, "
                 "whose kernels it runs without the variable (env -u OPENBLAS_CORETYPE)", name, version, core,
                 set, RANK_NAME[kernel], RANK_NAME[cpu]);
    else
        snprintf(line, cap, "%s %s, its %s kernels (%s)", name, version, core,
                 set ? "OPENBLAS_CORETYPE is set" : "its own choice");
}

// Restarts with OPENBLAS_CORETYPE set when the kernel needs it (restart_fitted).
static void blas_use_fitting_kernel(char **argv) {
    if (getenv("OPENBLAS_CORETYPE")) return;
    const char *chosen = openblas_get_corename();
    const char *fitting = kernel_for_this_cpu();
    if (!chosen || !fitting || strcasecmp(chosen, "Prescott") != 0) return;
    setenv("OPENBLAS_CORETYPE", fitting, 1);
    execv("/proc/self/exe", argv);
    // no /proc: go on with the slow kernel, which computes the same products
}

void restart_fitted(char **argv) {
    int set_policy = !getenv("OMP_WAIT_POLICY");
    if (set_policy) setenv("OMP_WAIT_POLICY", "passive", 1);
    blas_use_fitting_kernel(argv);   // restarts if the kernel needs it, with the policy set
    if (set_policy) execv("/proc/self/exe", argv);
    // no /proc: go on as started, which computes the same numbers
}
