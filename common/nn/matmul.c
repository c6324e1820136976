// matmul.c: the matrix product, through oneDNN's dnnl_sgemm.
//
// Why oneDNN and not OpenBLAS (which the rest of the project still uses for
// LAPACK and the probe network): raced on this model's own products, one
// single-threaded call per block as the model makes them, oneDNN's sgemm was
// the faster on every Linear (docs/performance.md, "The libraries on the
// model's products"; results/performance/README.md names the commit of the
// race's tool).
//
// Called inside an OpenMP parallel region, dnnl_sgemm runs on the calling
// thread alone (oneDNN, built on OpenMP, does not nest), which is what the
// callers' fixed blocks need.
#include <oneapi/dnnl/dnnl.h>
#include <oneapi/dnnl/dnnl_debug.h>   // dnnl_cpu_isa2str
#include <stdio.h>
#include <stdlib.h>
#include "matmul.h"

void matmul(int trans_a, int trans_b, int M, int N, int K, float alpha,
            const float *A, int lda, const float *B, int ldb, float beta, float *C, int ldc) {
    dnnl_status_t status = dnnl_sgemm(trans_a ? 'T' : 'N', trans_b ? 'T' : 'N', M, N, K,
                                      alpha, A, lda, B, ldb, beta, C, ldc);
    if (status != dnnl_success) {   // only a shape bug of ours can get here
        fprintf(stderr, "matmul: dnnl_sgemm refused (%d x %d x %d, status %d)\n", M, N, K, (int)status);
        abort();
    }
}

const char *matmul_about(void) {
    static char line[128];
    const dnnl_version_t *v = dnnl_version();
    snprintf(line, sizeof line, "oneDNN %d.%d.%d, dnnl_sgemm, %s kernels", v->major, v->minor, v->patch,
             dnnl_cpu_isa2str(dnnl_get_effective_cpu_isa()));
    return line;
}
