// matmul.h: the one matrix product every Linear and the attention call.
#ifndef TINYDIT_MATMUL_H
#define TINYDIT_MATMUL_H

// C (M, N) = alpha · op(A) · op(B) + beta · C, all row-major; op(X) is X,
// or Xᵀ when its flag is set (A is then stored (K, M), B (N, K)).
// It runs on the calling thread: the callers cut their work into blocks of
// a fixed size and spread the blocks over OpenMP threads themselves, so that
// a run's numbers do not depend on the thread count (linear.c says why).
void matmul(int trans_a, int trans_b, int M, int N, int K, float alpha,
            const float *A, int lda, const float *B, int ldb, float beta, float *C, int ldc);

// One line naming the library and the instruction set the products run on,
// for benchmarks ("oneDNN 2.6.3, dnnl_sgemm, avx512_core_bf16 kernels").
const char *matmul_about(void);

#endif
