// matmul.c: the matrix product, through oneDNN's dnnl_sgemm: on this
// model's own products, one single-threaded call per block, it is faster
// than OpenBLAS (which the project still uses for LAPACK and the probe
// network) on every Linear. And the threads' bookkeeping the layers share.
//
// Called inside an OpenMP parallel region, dnnl_sgemm runs on the calling
// thread alone (oneDNN, built on OpenMP, does not nest), which is what the
// callers' fixed blocks need.
#include <oneapi/dnnl/dnnl.h>
#include <oneapi/dnnl/dnnl_debug.h>   // dnnl_cpu_isa2str
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "layers.h"
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

// At attention's small sizes oneDNN runs the plain product faster than the
// transposed one, copy included (`lab/lab speed` times the step). The copy
// runs row by row of t, so that its writes are consecutive.
void matmul_bt(int M, int N, int K, float alpha, const float *A, int lda,
               const float *B, int ldb, float beta, float *C, int ldc, float *t) {
    for (int j = 0; j < K; j++)
        for (int l = 0; l < N; l++) t[(size_t)j * N + l] = B[(size_t)l * ldb + j];
    matmul(0, 0, M, N, K, alpha, A, lda, t, N, beta, C, ldc);
}

const char *matmul_about(void) {
    static char line[128];
    const dnnl_version_t *v = dnnl_version();
    snprintf(line, sizeof line, "oneDNN %d.%d.%d, dnnl_sgemm, %s kernels", v->major, v->minor, v->patch,
             dnnl_cpu_isa2str(dnnl_get_effective_cpu_isa()));
    return line;
}

// A loop over the areas never starts more threads than there are areas,
// and its results do not depend on how many it starts.
int work_slots(void) {
    return omp_get_max_threads();
}

float *work_area(float *areas, size_t per) {
    return areas + (size_t)omp_get_thread_num() * per;
}

int work_team(int slots) {
    int t = omp_get_max_threads();
    return t < slots ? t : slots;
}

// A clear (the gradients, the backward's buffers that gather sums, SwiGLU's
// hidden gradients) is megabytes: on one thread it is a serial pass of its own.
#define CLEAR_CHUNK 65536   // floats per task
void parallel_clear(float *x, size_t n) {
    long chunks = (long)((n + CLEAR_CHUNK - 1) / CLEAR_CHUNK);
    #pragma omp parallel for schedule(static) if (n > OMP_MIN_FLOATS)
    for (long k = 0; k < chunks; k++) {
        size_t i = (size_t)k * CLEAR_CHUNK;
        memset(x + i, 0, (n - i < CLEAR_CHUNK ? n - i : CLEAR_CHUNK) * sizeof(float));
    }
}
