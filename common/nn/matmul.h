// matmul.h: the matrix products every Linear and the attention call, and
// what the layers need around them to run on threads: per-thread work
// areas, a threaded clear.
//
// Threads: the layers cut each product into blocks of a fixed size, one
// matmul each inside their own OpenMP loops, where it runs on the calling
// thread. A library's own threading splits a product by the thread count
// and rounds differently on 1 and on 2 threads; fixed blocks do not. The
// loops hand the blocks out by schedule(runtime) (OMP_SCHEDULE; by default
// one at a time to whichever thread is free, so a thread slowed by another
// process does fewer), and even a one-block loop opens its region: outside
// one, the library would thread the product itself.
#ifndef TINYDIT_MATMUL_H
#define TINYDIT_MATMUL_H
#include <stddef.h>

// C (M, N) = alpha · op(A) · op(B) + beta · C, all row-major; op(X) is X,
// or Xᵀ when its flag is set (A is then stored (K, M), B (N, K)).
// It runs on the calling thread: the callers cut their work into blocks of
// a fixed size and spread the blocks over OpenMP threads themselves, so that
// a run's numbers do not depend on the thread count.
void matmul(int trans_a, int trans_b, int M, int N, int K, float alpha,
            const float *A, int lda, const float *B, int ldb, float beta, float *C, int ldc);

// C (M, N) = alpha · A · Bᵀ + beta · C for B (N, K), rows ldb apart: B is
// first copied transposed into t (K·N floats), for the plain product.
void matmul_bt(int M, int N, int K, float alpha, const float *A, int lda,
               const float *B, int ldb, float beta, float *C, int ldc, float *t);

// One line naming the library and the instruction set the products run on,
// for benchmarks ("oneDNN 2.6.3, dnnl_sgemm, avx512_core_bf16 kernels").
const char *matmul_about(void);

// Work areas for a parallel loop whose iterations need scratch: one area
// of `per` floats for each thread the loop may start.
int work_slots(void);                          // how many areas to make: as many as threads
float *work_area(float *areas, size_t per);    // the calling thread's area
int work_team(int slots);                      // threads a loop over `slots` areas may start

// x (n) = 0, spread over the threads when n is large.
void parallel_clear(float *x, size_t n);

#endif
