// gemm_race.c: which library multiplies this model's matrices fastest here?
//
//   build/tools/gemm_race                          # batch 64, on 1 and on 2 threads
//   build/tools/gemm_race --threads 2 --rounds 12 --warmup 2
//   build/tools/gemm_race --batch 1 --rounds 2 --warmup 0     # a quick check
//
// The racers are the calls a training step makes (common/nn/linear.c,
// attention.c, through common/nn/matmul.c), on the tutorial's model (model_config_default()): for each of a
// block's Linears (qkv, proj, fc1, fc2) at R = batch · 64 token rows
//     forward  out (R, OC)  = inp (R, IC) · Wᵀ              NT, beta 0
//     dX       dinp (R, IC) += dout (R, OC) · W (OC, IC)     NN, beta 1
//     dW       dW (OC, IC)  += doutᵀ (OC, R) · inp (R, IC)   TN, beta 1
// and the attention's three kinds of product, one per (image, head) pair
// (batch · heads of them), each of 64 × 64 × 32 multiply-adds:
//     q·kᵀ   (64, 64) = (64, 32)·(32, 64)ᵀ   NT  (and dy·vᵀ)
//     att·v  (64, 32) = (64, 64)·(64, 32)    NN  (and dscore·k)
//     attᵀ·dy (64, 32) = (64, 64)ᵀ·(64, 32)  TN  (and dscoreᵀ·q)
//
// The libraries, each at its best: the table keeps each one's faster of two
// ways to use T threads,
//     b  the model's way: the product cut into the blocks linear.c uses (128
//        rows of the output, 64 for dW) or the (image, head) pairs, handed to
//        T OpenMP threads, one single-threaded library call per block;
//     w  one call of the whole product, the library threading it on T threads.
// OpenBLAS (cblas_sgemm, the kernels it picks: unset OPENBLAS_CORETYPE),
// oneDNN's dnnl_sgemm (Debian's libdnnl-dev), oneDNN's matmul primitive
// with the weight packed once a call ("oneDNN packed", on the products
// whose second operand is a weight), BLIS's cblas_sgemm (Debian's
// libblis4-openmp, else libblis4-serial), and libxsmm's JIT kernels for the
// small attention products (libxsmm-dev, linked when installed; its 1.17
// makes no kernel for a transposed first operand in its column-major
// terms, which is the row-major q·kᵀ). BLIS is loaded with dlopen, so the
// tool builds and runs without it and says what is missing; oneDNN, which
// the model's products run on, is linked like the rest of the project.
//
// Every racer, and the FMA peak of each thread count (common/io/peak.h),
// runs in the same rounds (common/io/bench.h), so the load of the machine
// hits all alike. Before the race, every library's product is compared
// with OpenBLAS's from the same operands: a library that computed something
// else would make the race meaningless, and the tool exits 1.
//
// Nothing here changes the model: the table says which library is worth
// its place in matmul.c, and on which products (oneDNN won the Linears; see
// docs/performance.md for why libxsmm's lead on the attention's products
// did not carry over into the model).
#include <dlfcn.h>
#include <getopt.h>
#include <math.h>
#include <omp.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cblas.h>
#include <oneapi/dnnl/dnnl.h>
#ifdef HAVE_LIBXSMM
#include <libxsmm.h>
#endif
#include "io/args.h"
#include "io/bench.h"
#include "io/blas_kernel.h"
#include "io/peak.h"
#include "nn/config.h"
#include "nn/rng.h"

#define BLIS_OPENMP "/usr/lib/x86_64-linux-gnu/blis-openmp/libblis.so.4"
#define BLIS_SERIAL "/usr/lib/x86_64-linux-gnu/blis-serial/libblis.so.4"
#define MAX_THREAD_COUNTS 4
#define AGREE 1e-4   // largest difference from OpenBLAS allowed, relative to OpenBLAS's largest entry

// One row-major product, C (M, N) = alpha · op(A) · op(B) + beta · C.
typedef struct {
    bool ta, tb;
    int M, N, K, lda, ldb, ldc;
    float alpha, beta;
} Call;

// ---------------------------------------------------------------------------
// The libraries: each multiplies a Call, and sets its own thread count.

typedef void (*CblasSgemm)(enum CBLAS_ORDER, enum CBLAS_TRANSPOSE, enum CBLAS_TRANSPOSE, blasint, blasint,
                           blasint, float, const float *, blasint, const float *, blasint, float, float *, blasint);

enum { OPENBLAS, ONEDNN_LIB, ONEDNN_PACKED, BLIS, XSMM, NLIBS };
typedef struct {
    const char *name;
    char about[200];        // version and kernels, or why it is missing
    bool present;
    bool attention_only;    // libxsmm: small products only
    bool weight_only;       // oneDNN packed: products whose second operand is a Linear's weight
    bool threads_itself;    // it can thread one call (setting w)
} Library;

static Library LIBS[NLIBS] = {
    { "OpenBLAS", "", true, false, false, true },
    { "oneDNN", "", true, false, false, true },
    { "oneDNN packed", "", true, false, true, false },
    { "BLIS", "", false, false, false, true },
    { "libxsmm", "", false, true, false, false },
};
static CblasSgemm blis_sgemm;
static void (*blis_set_threads)(long);

static CBLAS_TRANSPOSE cblas_t(bool t) { return t ? CblasTrans : CblasNoTrans; }

// oneDNN's matmul primitive with the weight packed once ("oneDNN packed").
// dnnl_sgemm packs its operands into its kernel's layout on every call, so
// the model's 32 blocks of a Linear pack the same weight 32 times. The
// primitive is made once for the block's shape, with the weight's layout
// left to oneDNN (format "any"); each product call then reorders the weight
// into that layout once (what the model would do once a step, after AdamW
// has changed it) and runs every block on it. Only the forward and dX
// products have a weight as their second operand; dW's and the attention's
// change from call to call, and there dnnl_sgemm is already the racer.
#define PACKED_MAX_SHAPES 2   // a full block of rows, and a shorter last one

typedef struct {
    int shapes, rows[PACKED_MAX_SHAPES], threads;
    dnnl_primitive_t matmul[PACKED_MAX_SHAPES], reorder;
    dnnl_memory_t weight, packed;            // the weight as the caller keeps it; in oneDNN's layout
    dnnl_memory_t *src, *dst, *scratch;      // [shape · threads + thread]: one set per thread
    dnnl_stream_t *stream;                   // one per thread (streams are not shared between threads)
} Packed;

static dnnl_engine_t dnnl_cpu_engine;

#define DNNL_OK(call) do { if ((call) != dnnl_success) return -1; } while (0)

// A row-major (rows, cols) matrix with leading dimension ld, or its transpose.
static int matrix_desc(dnnl_memory_desc_t *d, int rows, int cols, int ld, bool transposed) {
    dnnl_dims_t dims = { rows, cols }, strides = { transposed ? 1 : ld, transposed ? ld : 1 };
    DNNL_OK(dnnl_memory_desc_init_by_strides(d, 2, dims, dnnl_f32, strides));
    return 0;
}

// The primitive for `rows` rows of c; its weight layout in *wmd. 0, or -1.
static int packed_shape(Packed *k, int s, const Call *c, int rows, dnnl_memory_desc_t *wmd) {
    dnnl_memory_desc_t a, b_any, out;
    dnnl_dims_t b_dims = { c->K, c->N };
    if (matrix_desc(&a, rows, c->K, c->lda, false) || matrix_desc(&out, rows, c->N, c->ldc, false)) return -1;
    DNNL_OK(dnnl_memory_desc_init_by_tag(&b_any, 2, b_dims, dnnl_f32, dnnl_format_tag_any));
    dnnl_matmul_desc_t desc;
    DNNL_OK(dnnl_matmul_desc_init(&desc, &a, &b_any, NULL, &out));
    dnnl_primitive_attr_t attr;
    dnnl_post_ops_t post;
    DNNL_OK(dnnl_primitive_attr_create(&attr));
    DNNL_OK(dnnl_primitive_attr_set_scratchpad_mode(attr, dnnl_scratchpad_mode_user));   // ours: no malloc per call
    DNNL_OK(dnnl_post_ops_create(&post));
    if (c->beta != 0) DNNL_OK(dnnl_post_ops_append_sum(post, c->beta));   // C = A·B + beta·C
    DNNL_OK(dnnl_primitive_attr_set_post_ops(attr, post));
    if (c->alpha != 1) DNNL_OK(dnnl_primitive_attr_set_output_scales(attr, 1, 0, &c->alpha));
    dnnl_primitive_desc_t pd;
    DNNL_OK(dnnl_primitive_desc_create(&pd, &desc, attr, dnnl_cpu_engine, NULL));
    dnnl_post_ops_destroy(post);
    dnnl_primitive_attr_destroy(attr);
    *wmd = *dnnl_primitive_desc_query_md(pd, dnnl_query_weights_md, 0);
    const dnnl_memory_desc_t *scratch = dnnl_primitive_desc_query_md(pd, dnnl_query_scratchpad_md, 0);
    DNNL_OK(dnnl_primitive_create(&k->matmul[s], pd));
    k->rows[s] = rows;
    for (int t = 0; t < k->threads; t++) {
        int i = s * k->threads + t;
        DNNL_OK(dnnl_memory_create(&k->src[i], &a, dnnl_cpu_engine, DNNL_MEMORY_NONE));
        DNNL_OK(dnnl_memory_create(&k->dst[i], &out, dnnl_cpu_engine, DNNL_MEMORY_NONE));
        DNNL_OK(dnnl_memory_create(&k->scratch[i], scratch, dnnl_cpu_engine, DNNL_MEMORY_ALLOCATE));
    }
    dnnl_primitive_desc_destroy(pd);
    return 0;
}

// Everything packed_make made (a half-made racer too: what it did not make is NULL).
static void packed_free(Packed *k) {
    if (!k) return;
    for (int s = 0; s < PACKED_MAX_SHAPES; s++)
        if (k->matmul[s]) dnnl_primitive_destroy(k->matmul[s]);
    if (k->reorder) dnnl_primitive_destroy(k->reorder);
    if (k->weight) dnnl_memory_destroy(k->weight);
    if (k->packed) dnnl_memory_destroy(k->packed);
    for (int i = 0; k->src && k->dst && k->scratch && i < k->shapes * k->threads; i++) {
        if (k->src[i]) dnnl_memory_destroy(k->src[i]);
        if (k->dst[i]) dnnl_memory_destroy(k->dst[i]);
        if (k->scratch[i]) dnnl_memory_destroy(k->scratch[i]);
    }
    for (int t = 0; k->stream && t < k->threads; t++)
        if (k->stream[t]) dnnl_stream_destroy(k->stream[t]);
    free(k->src); free(k->dst); free(k->scratch); free(k->stream);
    free(k);
}

// The packed racer for product c cut into blocks of `block` rows (first) and
// `last` rows (the last block), on up to `threads` threads; its weight is B.
// NULL where it does not apply or oneDNN refuses the shape (the table's "-").
static Packed *packed_make(const Call *c, int block, int last, int threads, const float *B) {
    Packed *k = calloc(1, sizeof *k);
    if (!k) return NULL;
    k->threads = threads;
    k->shapes = last == block ? 1 : 2;
    size_t n = (size_t)k->shapes * threads;
    k->src = calloc(n, sizeof *k->src), k->dst = calloc(n, sizeof *k->dst);
    k->scratch = calloc(n, sizeof *k->scratch), k->stream = calloc(threads, sizeof *k->stream);
    dnnl_memory_desc_t wmd[PACKED_MAX_SHAPES], user;
    bool ok = k->src && k->dst && k->scratch && k->stream &&
              (dnnl_cpu_engine || dnnl_engine_create(&dnnl_cpu_engine, dnnl_cpu, 0) == dnnl_success) &&
              packed_shape(k, 0, c, block, &wmd[0]) == 0 &&
              (k->shapes == 1 || (packed_shape(k, 1, c, last, &wmd[1]) == 0 && dnnl_memory_desc_equal(&wmd[0], &wmd[1])));
    // the weight as it is: (K, N), or (N, K) read transposed
    ok = ok && matrix_desc(&user, c->K, c->N, c->ldb, c->tb) == 0;
    dnnl_primitive_desc_t rpd = NULL;
    ok = ok && dnnl_memory_create(&k->weight, &user, dnnl_cpu_engine, (void *)B) == dnnl_success &&
         dnnl_memory_create(&k->packed, &wmd[0], dnnl_cpu_engine, DNNL_MEMORY_ALLOCATE) == dnnl_success &&
         dnnl_reorder_primitive_desc_create(&rpd, &user, dnnl_cpu_engine, &wmd[0], dnnl_cpu_engine, NULL) == dnnl_success &&
         dnnl_primitive_create(&k->reorder, rpd) == dnnl_success;
    if (rpd) dnnl_primitive_desc_destroy(rpd);
    for (int t = 0; ok && t < threads; t++)
        ok = dnnl_stream_create(&k->stream[t], dnnl_cpu_engine, dnnl_stream_default_flags) == dnnl_success;
    if (!ok) packed_free(k), k = NULL;
    return k;
}

// Once per product call: the weight into oneDNN's layout.
static void packed_pack(Packed *k) {
    dnnl_exec_arg_t args[2] = { { DNNL_ARG_FROM, k->weight }, { DNNL_ARG_TO, k->packed } };
    dnnl_primitive_execute(k->reorder, k->stream[0], 2, args);
    dnnl_stream_wait(k->stream[0]);
}

// One block of `rows` rows: C = A · packed weight (+ beta · C), on the calling thread.
static void packed_block(Packed *k, int rows, const float *A, float *C) {
    int t = omp_get_thread_num(), s = rows == k->rows[0] ? 0 : 1, i = s * k->threads + t;
    dnnl_memory_set_data_handle(k->src[i], (void *)A);
    dnnl_memory_set_data_handle(k->dst[i], C);
    dnnl_exec_arg_t args[4] = { { DNNL_ARG_SRC, k->src[i] }, { DNNL_ARG_WEIGHTS, k->packed },
                                { DNNL_ARG_DST, k->dst[i] }, { DNNL_ARG_SCRATCHPAD, k->scratch[i] } };
    dnnl_primitive_execute(k->matmul[s], k->stream[t], 4, args);
}

// lib computes c: one call on the calling thread's share of the library's threads.
static void gemm(int lib, const Call *c, const void *kernel, const float *A, const float *B, float *C) {
    switch (lib) {
    case OPENBLAS:
        cblas_sgemm(CblasRowMajor, cblas_t(c->ta), cblas_t(c->tb), c->M, c->N, c->K, c->alpha, A, c->lda, B,
                    c->ldb, c->beta, C, c->ldc);
        break;
    case BLIS:
        blis_sgemm(CblasRowMajor, cblas_t(c->ta), cblas_t(c->tb), c->M, c->N, c->K, c->alpha, A, c->lda, B,
                   c->ldb, c->beta, C, c->ldc);
        break;
    case ONEDNN_PACKED:
        packed_block((Packed *)kernel, c->M, A, C);   // B: packed by race_once, before the blocks
        break;
    case ONEDNN_LIB:
        dnnl_sgemm(c->ta ? 'T' : 'N', c->tb ? 'T' : 'N', c->M, c->N, c->K, c->alpha, A, c->lda, B, c->ldb,
                   c->beta, C, c->ldc);
        break;
#ifdef HAVE_LIBXSMM
    case XSMM:
        // libxsmm is column-major: row-major C = op(A)·op(B) is column-major
        // Cᵀ = op(B)ᵀ·op(A)ᵀ, so the kernel (made for this call) gets B first
        ((libxsmm_smmfunction)kernel)(B, A, C);
        break;
#endif
    }
}

// The library's thread count for its next calls (and OpenMP's, which oneDNN reads).
static void set_library_threads(int lib, int n) {
    omp_set_num_threads(n);
    if (lib == OPENBLAS) openblas_set_num_threads(n);
    if (lib == BLIS && blis_set_threads) blis_set_threads(n);
}

// libxsmm's kernel for one call, or NULL (no such kernel, or no libxsmm).
static void *xsmm_kernel(const Call *c) {
#ifdef HAVE_LIBXSMM
    libxsmm_blasint m = c->N, n = c->M, k = c->K, lda = c->ldb, ldb = c->lda, ldc = c->ldc;
    int flags = (c->tb ? LIBXSMM_GEMM_FLAG_TRANS_A : 0) | (c->ta ? LIBXSMM_GEMM_FLAG_TRANS_B : 0);
    return (void *)libxsmm_smmdispatch(m, n, k, &lda, &ldb, &ldc, &c->alpha, &c->beta, &flags, NULL);
#else
    (void)c;
    return NULL;
#endif
}

// dlopen, or NULL with the reason in `why` (and how to install the library).
static void *load(const char *path, int mode, const char *package, char *why, size_t cap) {
#ifdef __SANITIZE_ADDRESS__
    snprintf(why, cap, "not raced under AddressSanitizer (make sanitize's build), which cannot load it here");
    return NULL;
#endif
    void *h = dlopen(path, mode);
    if (!h) snprintf(why, cap, "not found (%s): apt-get install %s", dlerror(), package);
    return h;
}

// Describes every library in its `about`, finding BLIS and libxsmm first.
static void load_libraries(const char *blis_path) {
    blas_kernel_describe(LIBS[OPENBLAS].about, sizeof LIBS[OPENBLAS].about);
    Library *d = &LIBS[ONEDNN_LIB], *b = &LIBS[BLIS], *x = &LIBS[XSMM];
    const dnnl_version_t *v = dnnl_version();
    Library *k = &LIBS[ONEDNN_PACKED];
    snprintf(d->about, sizeof d->about, "oneDNN %d.%d.%d, dnnl_sgemm", v->major, v->minor, v->patch);
    snprintf(k->about, sizeof k->about, "oneDNN %d.%d.%d, its matmul primitive, the weight packed once a call",
             v->major, v->minor, v->patch);

    // RTLD_DEEPBIND: BLIS's cblas_sgemm calls its own sgemm_, which would
    // otherwise bind to OpenBLAS's, loaded first
    void *h = load(blis_path, RTLD_NOW | RTLD_LOCAL | RTLD_DEEPBIND, "libblis4-openmp", b->about, sizeof b->about);
    if (h && (blis_sgemm = (CblasSgemm)dlsym(h, "cblas_sgemm"))) {
        blis_set_threads = (void (*)(long))dlsym(h, "bli_thread_set_num_threads");
        const char *(*version)(void) = (const char *(*)(void))dlsym(h, "bli_info_get_version_str");
        const char *(*arch_name)(int) = (const char *(*)(int))dlsym(h, "bli_arch_string");
        int (*arch_id)(void) = (int (*)(void))dlsym(h, "bli_arch_query_id");
        snprintf(b->about, sizeof b->about, "BLIS %s, its %s kernels, %s", version ? version() : "?",
                 arch_name && arch_id ? arch_name(arch_id()) : "?", blis_path);
        b->present = true;
    } else if (h) snprintf(b->about, sizeof b->about, "no cblas_sgemm in %s", blis_path);

#ifdef HAVE_LIBXSMM
    libxsmm_init();
    snprintf(x->about, sizeof x->about, "libxsmm %s, its %s kernels, for the attention products",
             LIBXSMM_VERSION, libxsmm_get_target_arch());
    x->present = true;
#else
    snprintf(x->about, sizeof x->about, "not linked: apt-get install libxsmm-dev, then make tools");
#endif
}

// ---------------------------------------------------------------------------
// The products: `parts` calls, as the model makes them. Part i's operands
// start at A + i·a_step, B + i·b_step, C + i·c_step; a Linear's parts are
// blocks of `part_rows` rows of C (the last may be shorter), the attention's
// are (image, head) pairs, each a whole `call`.

typedef struct {
    char name[32];
    Call call;                  // the whole product (a Linear's) or one pair's
    bool attention;
    int parts, part_rows;
    long a_step, b_step, c_step;
    float *A, *B, *C, *C0;      // C0: the starting C, for the comparison
    long c_size;
    double flop;
} Product;

static int part_rows(const Product *p, int i) {
    if (p->attention) return p->call.M;
    int left = p->call.M - i * p->part_rows;
    return left < p->part_rows ? left : p->part_rows;
}

static float *random_floats(long n, Rng *r) {
    float *x = malloc(sizeof(float) * n);
    if (x) rng_fill_normal(r, x, n, 1.0f);
    return x;
}

// A product with random operands (A and B of a_size and b_size floats). 0, or -1 (out of memory).
static int product_init(Product *p, const char *name, Call call, int block, int pairs, Rng *r) {
    p->call = call;
    snprintf(p->name, sizeof p->name, "%s", name);
    p->attention = pairs > 0;
    long a_size = (long)(call.ta ? call.K : call.M) * call.lda, b_size = (long)(call.tb ? call.N : call.K) * call.ldb;
    p->c_size = (long)call.M * call.ldc;
    if (p->attention) {
        p->parts = pairs, p->part_rows = call.M;
        p->a_step = a_size, p->b_step = b_size, p->c_step = p->c_size;
        a_size *= pairs, b_size *= pairs, p->c_size *= pairs;
    } else {
        p->parts = (call.M + block - 1) / block, p->part_rows = block;
        p->a_step = call.ta ? block : (long)block * call.lda, p->b_step = 0, p->c_step = (long)block * call.ldc;
    }
    p->flop = 2.0 * call.M * call.N * (double)call.K * (p->attention ? pairs : 1);
    p->A = random_floats(a_size, r), p->B = random_floats(b_size, r);
    p->C = random_floats(p->c_size, r), p->C0 = malloc(sizeof(float) * p->c_size);
    if (!p->A || !p->B || !p->C || !p->C0) return -1;
    memcpy(p->C0, p->C, sizeof(float) * p->c_size);
    return 0;
}

// The model's products (model_config_default(): the tutorial's), 15 of them. 0, or -1.
static int model_products(Product *p, int batch, Rng *r) {
    ModelConfig c = model_config_default();
    int R = batch * cfg_tokens(&c), D = c.dim, Hm = cfg_mlp_hidden(&c), L = cfg_tokens(&c), hd = D / c.heads;
    struct { const char *name; int IC, OC; } lin[4] = { { "qkv", D, 3 * D }, { "proj", D, D }, { "fc1", D, Hm },
                                                        { "fc2", Hm, D } };
    int n = 0;
    char name[32];
    for (int k = 0; k < 4; k++) {
        int IC = lin[k].IC, OC = lin[k].OC;
        snprintf(name, sizeof name, "%s forward", lin[k].name);
        if (product_init(&p[n++], name, (Call){ false, true, R, OC, IC, IC, IC, OC, 1, 0 }, 128, 0, r)) return -1;
        snprintf(name, sizeof name, "%s dX", lin[k].name);
        if (product_init(&p[n++], name, (Call){ false, false, R, IC, OC, OC, IC, IC, 1, 1 }, 128, 0, r)) return -1;
        snprintf(name, sizeof name, "%s dW", lin[k].name);
        if (product_init(&p[n++], name, (Call){ true, false, OC, IC, R, OC, IC, IC, 1, 1 }, 64, 0, r)) return -1;
    }
    int pairs = batch * c.heads;
    if (product_init(&p[n++], "att q.kT (NT)", (Call){ false, true, L, L, hd, hd, hd, L, 1 / sqrtf((float)hd), 0 },
                     0, pairs, r) ||
        product_init(&p[n++], "att att.v (NN)", (Call){ false, false, L, hd, L, L, hd, hd, 1, 0 }, 0, pairs, r) ||
        product_init(&p[n++], "att attT.dy (TN)", (Call){ true, false, L, hd, L, L, hd, hd, 1, 0 }, 0, pairs, r))
        return -1;
    return n;
}

// ---------------------------------------------------------------------------
// The racers: one library, one product, one thread count, one way (b or w).

typedef struct {
    int lib, threads;
    bool whole;                 // w: one call, the library's threads
    const Product *p;
    void *kernel;               // libxsmm's, made for the product's call
} Racer;

static void race_once(void *ctx) {
    const Racer *x = ctx;
    const Product *p = x->p;
    if (x->whole) {
        set_library_threads(x->lib, x->threads);
        gemm(x->lib, &p->call, x->kernel, p->A, p->B, p->C);
        return;
    }
    set_library_threads(x->lib, 1);
    if (x->lib == ONEDNN_PACKED) packed_pack(x->kernel);
    #pragma omp parallel for schedule(dynamic) num_threads(x->threads)
    for (int i = 0; i < p->parts; i++) {
        Call c = p->call;
        c.M = part_rows(p, i);
        gemm(x->lib, &c, x->kernel, p->A + i * p->a_step, p->B + i * p->b_step, p->C + i * p->c_step);
    }
}

// x's product once, from the starting C (C0).
static void run_from_start(const Racer *x) {
    memcpy(x->p->C, x->p->C0, sizeof(float) * x->p->c_size);
    race_once((void *)x);
}

// The largest difference of x's product from ref, relative to ref's largest entry.
static double difference_from(const Racer *x, const float *ref) {
    run_from_start(x);
    const float *c = x->p->C;
    double diff = 0, scale = 0;
    for (long i = 0; i < x->p->c_size; i++) {
        diff = fmax(diff, fabs((double)c[i] - ref[i]));
        scale = fmax(scale, fabs((double)ref[i]));
    }
    return scale > 0 ? diff / scale : diff;
}

// ---------------------------------------------------------------------------

typedef struct {
    int batch, rounds, warmup, calls, nthreads, threads[MAX_THREAD_COUNTS];
    const char *blis;
} RaceOptions;

static void usage(FILE *f) {
    fprintf(f,
        "usage: gemm_race [--batch N] [--threads 1,2] [--rounds R] [--warmup W] [--calls C] [--blis PATH]\n\n"
        "  races OpenBLAS, oneDNN (dnnl_sgemm, and its matmul primitive on a weight packed once),\n"
        "  BLIS and libxsmm on the products of a training\n"
        "  step of the tutorial's model (forward, dX and dW of qkv, proj, fc1 and fc2; the\n"
        "  attention's per-(image, head) products), all in the same rounds with the FMA peak\n"
        "  of each thread count; checks first that every library computes OpenBLAS's product\n\n"
        "  --batch N     images per step (default 64: 4096 token rows)\n"
        "  --threads L   the thread counts, a comma-separated list (default 1,2)\n"
        "  --rounds R    rounds in all, one call of every racer per round and turn (default 10)\n"
        "  --warmup W    of which untimed (default 2)\n"
        "  --calls C     calls per turn (default 2)\n"
        "  --blis PATH   BLIS's library (default %s if installed, else %s)\n",
        BLIS_OPENMP, BLIS_SERIAL);
}

static int parse_thread_list(const char *s, RaceOptions *o) {
    o->nthreads = 0;
    char buf[64], *save = NULL;
    snprintf(buf, sizeof buf, "%s", s);
    for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        if (o->nthreads == MAX_THREAD_COUNTS || parse_int_in(t, 1, 256, &o->threads[o->nthreads]) != 0)
            return args_error(NULL, "--threads wants up to %d whole numbers from 1 to 256, e.g. 1,2", MAX_THREAD_COUNTS);
        o->nthreads++;
    }
    return o->nthreads ? ARGS_OK : args_error(NULL, "--threads wants a list such as 1,2");
}

static int parse_options(int argc, char **argv, RaceOptions *o) {
    *o = (RaceOptions){ 64, 10, 2, 2, 2, { 1, 2 }, access(BLIS_OPENMP, R_OK) == 0 ? BLIS_OPENMP : BLIS_SERIAL };
    static const struct option opts[] = {
        { "batch", required_argument, 0, 'b' },   { "threads", required_argument, 0, 't' },
        { "rounds", required_argument, 0, 'r' },  { "warmup", required_argument, 0, 'w' },
        { "calls", required_argument, 0, 'c' },   { "blis", required_argument, 0, 'l' },
        { "help", no_argument, 0, 'h' },          { 0, 0, 0, 0 },
    };
    int c, which, st;
    while ((c = getopt_long(argc, argv, "", opts, &which)) != -1) {
        int *target = NULL, lo = 1, hi = 1000;
        switch (c) {
        case 'b': target = &o->batch; hi = 256; break;
        case 't': if ((st = parse_thread_list(optarg, o)) != ARGS_OK) return st; break;
        case 'r': target = &o->rounds; lo = 2; break;
        case 'w': target = &o->warmup; lo = 0; break;
        case 'c': target = &o->calls; hi = 100; break;
        case 'l': o->blis = optarg; break;
        case 'h': usage(stdout); return ARGS_HELP;
        default: return args_unknown(usage, argv);
        }
        if (target && parse_int_in(optarg, lo, hi, target) != 0)
            return args_error(NULL, "--%s wants a whole number from %d to %d", opts[which].name, lo, hi);
    }
    return args_check_rounds(usage, argc, argv, o->rounds, o->warmup);
}

// Every racer that can run: products x libraries x thread counts x ways.
static int make_racers(const RaceOptions *o, const Product *p, int np, Racer *x) {
    int n = 0;
    for (int t = 0; t < o->nthreads; t++)
        for (int k = 0; k < np; k++)
            for (int lib = 0; lib < NLIBS; lib++) {
                const Library *L = &LIBS[lib];
                bool weight_second = !p[k].attention && p[k].b_step == 0 && !p[k].call.ta;   // forward, dX
                if (!L->present || (L->attention_only && !p[k].attention) || (L->weight_only && !weight_second))
                    continue;
                void *kernel = lib == XSMM      ? xsmm_kernel(&p[k].call)
                             : lib == ONEDNN_PACKED ? packed_make(&p[k].call, p[k].part_rows,
                                                                  part_rows(&p[k], p[k].parts - 1), o->threads[t], p[k].B)
                                                    : NULL;
                if ((lib == XSMM || lib == ONEDNN_PACKED) && !kernel) continue;
                for (int whole = 0; whole < 2; whole++)
                    if (!whole || (L->threads_itself && !p[k].attention))
                        x[n++] = (Racer){ lib, o->threads[t], whole, &p[k], kernel };
            }
    return n;
}

// Compares every racer's product with OpenBLAS's (blocks, one thread) and
// prints each library's largest difference. 0, or 1 if one disagrees.
static int check_agreement(const Product *p, int np, const Racer *x, int nx) {
    double worst[NLIBS] = { 0 };
    for (int k = 0; k < np; k++) {
        Racer ref_racer = { OPENBLAS, 1, false, &p[k], NULL };
        float *ref = malloc(sizeof(float) * p[k].c_size);
        if (!ref) return fprintf(stderr, "gemm_race: out of memory\n"), 1;
        run_from_start(&ref_racer);
        memcpy(ref, p[k].C, sizeof(float) * p[k].c_size);
        for (int i = 0; i < nx; i++)
            if (x[i].p == &p[k]) worst[x[i].lib] = fmax(worst[x[i].lib], difference_from(&x[i], ref));
        free(ref);
    }
    int bad = 0;
    printf("every library's products against OpenBLAS's, from the same operands (largest difference, relative\n"
           "to OpenBLAS's largest entry):");
    for (int lib = 0; lib < NLIBS; lib++)
        if (LIBS[lib].present) {
            printf(" %s %.1e%s", LIBS[lib].name, worst[lib], lib == NLIBS - 1 ? "" : ",");
            if (!(worst[lib] <= AGREE)) bad = 1;
        }
    printf("\n\n");
    if (bad) fprintf(stderr, "gemm_race: a library's products differ from OpenBLAS's by more than %.0e\n", AGREE);
    return bad;
}

// A table cell: a library's best GFLOP/s on one product and thread count,
// its fraction of the peak and the way (b or w), or "-".
typedef struct { double ms; bool whole; } Best;

// blocks_only: the model's way alone (what keeps its results the same on any thread count).
static Best best_of(const Racer *x, const double *ms, int nx, int lib, const Product *p, int threads,
                    bool blocks_only) {
    Best b = { 0, false };
    for (int i = 0; i < nx; i++)
        if (x[i].lib == lib && x[i].p == p && x[i].threads == threads && !(blocks_only && x[i].whole) &&
            (b.ms == 0 || ms[i] < b.ms))
            b = (Best){ ms[i], x[i].whole };
    return b;
}

// How often a step of the tutorial's model (depth 4) makes each product:
// once per block for a Linear's, twice per block for each attention kind
// (q·kᵀ and dy·vᵀ; att·v and dscore·k; attᵀ·dy and dscoreᵀ·q).
static int per_step(const Product *p) { return (p->attention ? 2 : 1) * model_config_default().depth; }

static void print_tables(const RaceOptions *o, const Product *p, int np, const Racer *x, const double *ms,
                         int nx, const double *peak) {
    for (int t = 0; t < o->nthreads; t++) {
        int T = o->threads[t];
        printf("%d thread%s: the FMA peak %.1f GFLOP/s; each cell GFLOP/s, fraction of the peak, way (b/w)\n", T,
               T == 1 ? "" : "s", peak[t]);
        Table tab;
        table_init(&tab, 2 + NLIBS, "product", "GFLOP", "OpenBLAS", "oneDNN", "oneDNN packed", "BLIS", "libxsmm");
        // the step's products at each library's best, in its blocks alone, and at the best of all
        double step_ms[NLIBS + 1] = { 0 }, blocks_ms[NLIBS] = { 0 };
        bool covers[NLIBS] = { true, true, true, true, true };
        for (int k = 0; k < np; k++) {
            table_cell(&tab, "%s", p[k].name);
            table_cell(&tab, "%.3f", p[k].flop * 1e-9);
            double fastest = 0;
            for (int lib = 0; lib < NLIBS; lib++) {
                Best b = best_of(x, ms, nx, lib, &p[k], T, false);
                if (b.ms == 0) { table_cell(&tab, "-"); covers[lib] = false; continue; }
                blocks_ms[lib] += per_step(&p[k]) * best_of(x, ms, nx, lib, &p[k], T, true).ms;
                double gflops = p[k].flop * 1e-6 / b.ms;
                table_cell(&tab, "%.1f %.2f %c", gflops, gflops / peak[t], b.whole ? 'w' : 'b');
                step_ms[lib] += per_step(&p[k]) * b.ms;
                if (fastest == 0 || b.ms < fastest) fastest = b.ms;
            }
            step_ms[NLIBS] += per_step(&p[k]) * fastest;
        }
        table_print(&tab);
        double step_flop = 0;
        for (int k = 0; k < np; k++) step_flop += per_step(&p[k]) * p[k].flop;
        printf("these products of one training step (%.2f GFLOP, depth %d): floor %.1f ms at the peak;\n",
               step_flop * 1e-9, model_config_default().depth, step_flop * 1e-6 / peak[t]);
        for (int lib = 0; lib < NLIBS; lib++)
            if (covers[lib]) printf("  %s %.1f ms at its best, %.1f ms in the model's blocks alone\n", LIBS[lib].name,
                                    step_ms[lib], blocks_ms[lib]);
        // oneDNN packed races on the forward and dX products alone: set beside dnnl_sgemm on those
        double packed_ms = 0, sgemm_ms = 0;
        for (int k = 0; k < np; k++) {
            double packed = best_of(x, ms, nx, ONEDNN_PACKED, &p[k], T, true).ms;
            if (packed == 0) continue;
            packed_ms += per_step(&p[k]) * packed;
            sgemm_ms += per_step(&p[k]) * best_of(x, ms, nx, ONEDNN_LIB, &p[k], T, true).ms;
        }
        if (packed_ms > 0)
            printf("  the forward and dX products in the model's blocks: oneDNN packed %.1f ms, dnnl_sgemm %.1f ms\n",
                   packed_ms, sgemm_ms);
        printf("  the fastest library on each product: %.1f ms\n\n", step_ms[NLIBS]);
    }
}

int main(int argc, char **argv) {
    blas_use_fitting_kernel(argv);   // OpenBLAS on a CPU newer than it: io/blas_kernel.h
    RaceOptions o;
    int st = parse_options(argc, argv, &o);
    if (st != ARGS_OK) return args_exit_code(st);
    load_libraries(o.blis);
    for (int lib = 0; lib < NLIBS; lib++) printf("%-9s %s\n", LIBS[lib].name, LIBS[lib].about);

    Product p[16];
    Rng r;
    rng_seed(&r, 7);
    int np = model_products(p, o.batch, &r);
    Racer *x = malloc(sizeof(Racer) * np * NLIBS * 2 * MAX_THREAD_COUNTS);
    if (np < 0 || !x) return fprintf(stderr, "gemm_race: out of memory\n"), 1;
    int nx = make_racers(&o, p, np, x);
    printf("batch %d: %d token rows; %d (image, head) pairs; the median of %d rounds after %d warm-up, %d call%s "
           "per turn\n\n", o.batch, p[0].call.M, p[np - 1].parts, o.rounds - o.warmup, o.warmup, o.calls,
           o.calls == 1 ? "" : "s");
    if (check_agreement(p, np, x, nx) != 0) return 1;
    fflush(stdout);

    // the race: every racer, then the FMA peak of each thread count
    BenchFn *fns = malloc(sizeof(BenchFn) * (nx + MAX_THREAD_COUNTS));
    FmaPeakRun peak_run[MAX_THREAD_COUNTS];
    double *ms = malloc(sizeof(double) * (nx + MAX_THREAD_COUNTS)), peak[MAX_THREAD_COUNTS];
    if (!fns || !ms) return fprintf(stderr, "gemm_race: out of memory\n"), 1;
    for (int i = 0; i < nx; i++) fns[i] = (BenchFn){ LIBS[x[i].lib].name, race_once, &x[i] };
    for (int t = 0; t < o.nthreads; t++) {
        peak_run[t] = (FmaPeakRun){ .threads = o.threads[t], .iters = FMA_PEAK_ITERS / 4 };
        fns[nx + t] = (BenchFn){ "FMA peak", fma_peak_run, &peak_run[t] };
    }
    bench_interleaved(fns, nx + o.nthreads, o.warmup, o.rounds - o.warmup, o.calls, ms);
    for (int t = 0; t < o.nthreads; t++) peak[t] = peak_run[t].flop * 1e-6 / ms[nx + t];
    print_tables(&o, p, np, x, ms, nx, peak);
    printf("b: the model's blocks (128 rows, 64 for dW; one (image, head) pair each), one single-threaded call\n"
           "each, on the threads of an OpenMP loop; w: one call of the whole product, threaded by the library\n");
    for (int k = 0; k < np; k++) { free(p[k].A); free(p[k].B); free(p[k].C); free(p[k].C0); }
    for (int i = 0; i < nx; i++)
        if (x[i].lib == ONEDNN_PACKED) packed_free(x[i].kernel);
    free(x); free(fns); free(ms);
#ifdef HAVE_LIBXSMM
    libxsmm_finalize();
#endif
    return 0;
}
