// blas_race.c: would another BLAS run this model's training step faster than
// OpenBLAS? If BLIS's CBLAS ran the model's shapes faster, the project would
// use it: this program measures it.
//
//   build/tools/blas_race                  # Debian's BLIS (apt-get install libblis4-serial)
//   build/tools/blas_race --lib PATH       # any library with a CBLAS cblas_sgemm
//   build/tools/blas_race --batch 64 --threads 2 --rounds 8 --warmup 2
//
// How it swaps the library without touching the model. The model's code
// (common/nn/linear.c, attention.c) calls cblas_sgemm. This program defines a
// cblas_sgemm of its own, so the linker binds those calls to it instead of to
// OpenBLAS; it passes each call on to the library the current racer chose:
// OpenBLAS's own cblas_sgemm (the next definition in the search order,
// dlsym(RTLD_NEXT)) or the other library's (dlopen of --lib). The model then
// runs unchanged, with its own blocks and its own OpenMP loops, and the two
// libraries take turns in one process (bench_interleaved), so the load of the
// machine hits both alike.
//
// What it races, per library: the MLP's first product as the model makes it
// (linear_forward, 4,096 rows x 128 -> 512 at batch 64), and a whole training
// step of the baseline and of all four upgrades. It also counts the calls each
// library received, so a reader can see that the swap happened, and checks
// that both libraries' steps give the same loss to float rounding (they
// round differently, so not bit for bit).
#include <dlfcn.h>
#include <getopt.h>
#include <math.h>
#include <omp.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cblas.h>
#include "io/args.h"
#include "io/bench.h"
#include "io/blas_kernel.h"
#include "io/config_parse.h"
#include "nn/layers.h"
#include "nn/model.h"
#include "nn/rng.h"
#include "nn/train_step.h"

#define DEFAULT_LIB "/usr/lib/x86_64-linux-gnu/blis-serial/libblis.so.4"

typedef void (*SgemmFn)(enum CBLAS_ORDER, enum CBLAS_TRANSPOSE, enum CBLAS_TRANSPOSE, blasint, blasint,
                        blasint, float, const float *, blasint, const float *, blasint, float, float *,
                        blasint);

// The library the calls go to now (set by each racer before it runs), and
// how many calls each library received.
enum { OPENBLAS, OTHER };
static SgemmFn sgemm_of[2];
static int current = OPENBLAS;
static atomic_long calls_to[2];

void cblas_sgemm(OPENBLAS_CONST enum CBLAS_ORDER order, OPENBLAS_CONST enum CBLAS_TRANSPOSE ta,
                 OPENBLAS_CONST enum CBLAS_TRANSPOSE tb, OPENBLAS_CONST blasint M, OPENBLAS_CONST blasint N,
                 OPENBLAS_CONST blasint K, OPENBLAS_CONST float alpha, OPENBLAS_CONST float *A,
                 OPENBLAS_CONST blasint lda, OPENBLAS_CONST float *B, OPENBLAS_CONST blasint ldb,
                 OPENBLAS_CONST float beta, float *C, OPENBLAS_CONST blasint ldc) {
    atomic_fetch_add_explicit(&calls_to[current], 1, memory_order_relaxed);
    sgemm_of[current](order, ta, tb, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
}

typedef struct {
    const char *lib;
    int batch, threads, rounds, warmup;
} RaceOptions;

static void usage(FILE *f) {
    fprintf(f,
        "usage: blas_race [--lib PATH] [--batch N] [--threads T] [--rounds R] [--warmup W]\n\n"
        "  races the cblas_sgemm of another library against OpenBLAS's on this model's\n"
        "  own products and training steps, the two libraries taking turns in one process\n\n"
        "  --lib PATH   the other library (default %s,\n"
        "               Debian's BLIS without threads: apt-get install libblis4-serial)\n"
        "  --batch N    images per step (default 64)\n"
        "  --threads T  OpenMP threads (default: all cores)\n"
        "  --rounds R   rounds in all, one turn of each racer per round (default 8)\n"
        "  --warmup W   of which untimed (default 2)\n", DEFAULT_LIB);
}

static int parse_options(int argc, char **argv, RaceOptions *o) {
    *o = (RaceOptions){ DEFAULT_LIB, 64, omp_get_max_threads(), 8, 2 };
    static const struct option opts[] = {
        { "lib", required_argument, 0, 'l' },     { "batch", required_argument, 0, 'b' },
        { "threads", required_argument, 0, 't' }, { "rounds", required_argument, 0, 'r' },
        { "warmup", required_argument, 0, 'w' },  { "help", no_argument, 0, 'h' },
        { 0, 0, 0, 0 },
    };
    int c, which;
    while ((c = getopt_long(argc, argv, "", opts, &which)) != -1) {
        int *target = NULL, lo = 1, hi = 1000;
        switch (c) {
        case 'l': o->lib = optarg; break;
        case 'b': target = &o->batch; hi = 1024; break;
        case 't': target = &o->threads; hi = 256; break;
        case 'r': target = &o->rounds; lo = 2; break;
        case 'w': target = &o->warmup; lo = 0; break;
        case 'h': usage(stdout); return ARGS_HELP;
        default: return args_unknown(usage, argv);
        }
        if (target && parse_int_in(optarg, lo, hi, target) != 0)
            return args_error(NULL, "--%s wants a whole number from %d to %d", opts[which].name, lo, hi);
    }
    return args_check_rounds(usage, argc, argv, o->rounds, o->warmup);
}

// Finds both libraries' cblas_sgemm and describes the other one in `name`
// (BLIS says its version and the kernels it chose). 0, or 2 with a message.
static int load_libraries(const char *path, char *name, size_t cap) {
#ifdef __SANITIZE_ADDRESS__
    fprintf(stderr, "blas_race: this build has AddressSanitizer (make sanitize), which cannot load a library "
            "with RTLD_DEEPBIND (below); run the normal build's build/tools/blas_race\n");
    return 2;
#endif
    sgemm_of[OPENBLAS] = (SgemmFn)dlsym(RTLD_NEXT, "cblas_sgemm");
    // RTLD_DEEPBIND: BLIS's cblas_sgemm calls its own Fortran-style sgemm_,
    // and without it that name would bind to OpenBLAS's sgemm_, loaded first,
    // so the "other" library would quietly run OpenBLAS (we saw it: the same
    // bits and the same time on both sides).
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL | RTLD_DEEPBIND);
    if (!h) {
        fprintf(stderr, "blas_race: cannot load %s (%s).\nInstall Debian's BLIS (apt-get install "
                "libblis4-serial) or pass --lib PATH to another library with cblas_sgemm.\n", path, dlerror());
        return 2;
    }
    sgemm_of[OTHER] = (SgemmFn)dlsym(h, "cblas_sgemm");
    if (!sgemm_of[OPENBLAS] || !sgemm_of[OTHER]) {
        fprintf(stderr, "blas_race: no cblas_sgemm in %s\n", sgemm_of[OPENBLAS] ? path : "OpenBLAS");
        return 2;
    }
    const char *(*version)(void) = (const char *(*)(void))dlsym(h, "bli_info_get_version_str");
    const char *(*arch_name)(int) = (const char *(*)(int))dlsym(h, "bli_arch_string");
    int (*arch_id)(void) = (int (*)(void))dlsym(h, "bli_arch_query_id");
    if (version && arch_name && arch_id)
        snprintf(name, cap, "BLIS %s, its %s kernels", version(), arch_name(arch_id()));
    else
        snprintf(name, cap, "%s", path);
    return 0;
}

// ---------------------------------------------------------------------------
// The racers: each runs one piece of the model with one library.

typedef struct {
    int lib;
    float *out;
    const float *inp, *weight, *bias;
    int R, IC, OC;
} ProductRacer;

static void run_product(void *ctx) {
    ProductRacer *p = ctx;
    current = p->lib;
    linear_forward(p->out, p->inp, p->weight, p->bias, p->R, p->IC, p->OC);
}

typedef struct {
    int lib;
    Model m;
    TrainState ts;
    Rng rng;
    const float *x1;
} StepRacer;

static void run_step(void *ctx) {
    StepRacer *s = ctx;
    current = s->lib;
    train_step(&s->ts, s->x1, &s->rng);
}

// A model of the tutorial's size with `sets` switched on, its optimizer, and
// its noise seeded the same for both libraries. 0, or 2 with a message.
static int step_racer_init(StepRacer *s, int lib, const char *const *sets, int batch, const float *x1) {
    Config c = config_default();
    char err[512];
    for (int i = 0; sets[i]; i++)
        if (config_set(&c, sets[i], err, sizeof err) != 0) return fprintf(stderr, "blas_race: %s\n", err), 2;
    c.batch = batch;
    if (config_validate(&c, err, sizeof err) != 0 || model_build(&s->m, &c, err, sizeof err) != 0)
        return fprintf(stderr, "blas_race: %s\n", err), 2;
    model_init_weights(&s->m, 0);
    AdamWConfig opt = adamw_default(c.lr);
    if (train_state_init(&s->ts, &s->m, batch, &opt) != 0) return fprintf(stderr, "blas_race: out of memory\n"), 2;
    rng_seed(&s->rng, 1);
    s->lib = lib;
    s->x1 = x1;
    return 0;
}

// The ablation's "baseline" and "all four" (step6_ablation/ablation.c).
static const char *const BASELINE[] = { NULL };
static const char *const ALL_FOUR[] = { "norm=rmsnorm", "qk_norm=true", "mlp=swiglu", "pos=rope2d", NULL };

// ---------------------------------------------------------------------------

int main(int argc, char **argv) {
    blas_use_fitting_kernel(argv);   // OpenBLAS on a CPU newer than it: io/blas_kernel.h
    RaceOptions o;
    int st = parse_options(argc, argv, &o);
    if (st != ARGS_OK) return args_exit_code(st);
    char other[256];
    if ((st = load_libraries(o.lib, other, sizeof other)) != 0) return st;
    omp_set_num_threads(o.threads);

    Config base = config_default();
    int R = o.batch * cfg_tokens(&base), D = base.dim, H = 4 * D;
    float *inp = malloc(sizeof(float) * R * D), *w = malloc(sizeof(float) * H * D), *b = malloc(sizeof(float) * H);
    float *out[2] = { malloc(sizeof(float) * R * H), malloc(sizeof(float) * R * H) };
    size_t npix = (size_t)o.batch * base.channels * base.img * base.img;
    float *x1 = malloc(sizeof(float) * npix);
    if (!inp || !w || !b || !out[0] || !out[1] || !x1) return fprintf(stderr, "blas_race: out of memory\n"), 1;
    Rng r;
    rng_seed(&r, 7);
    rng_fill_normal(&r, inp, (long)R * D, 1.0f);
    rng_fill_normal(&r, w, (long)H * D, 0.05f);
    rng_fill_normal(&r, b, H, 0.05f);
    rng_fill_normal(&r, x1, (long)npix, 1.0f);

    ProductRacer prod[2];
    StepRacer steps[4];
    BenchFn fns[6];
    for (int lib = 0; lib < 2; lib++) {
        prod[lib] = (ProductRacer){ lib, out[lib], inp, w, b, R, D, H };
        fns[lib] = (BenchFn){ "fc1", run_product, &prod[lib] };
        for (int v = 0; v < 2; v++) {
            StepRacer *s = &steps[2 * v + lib];
            if ((st = step_racer_init(s, lib, v ? ALL_FOUR : BASELINE, o.batch, x1)) != 0) return st;
            fns[2 + 2 * v + lib] = (BenchFn){ "step", run_step, s };
        }
    }

    printf("blas_race: OpenBLAS (its %s kernels%s) against %s\n", openblas_get_corename(),
           getenv("OPENBLAS_CORETYPE") ? ", OPENBLAS_CORETYPE is set" : "", other);
    printf("batch %d, %d thread%s, median of %d rounds after %d warm-up; the libraries take turns\n\n",
           o.batch, o.threads, o.threads == 1 ? "" : "s", o.rounds - o.warmup, o.warmup);
    fflush(stdout);
    double ms[6];
    bench_interleaved(fns, 6, o.warmup, o.rounds - o.warmup, 1, ms);

    double fc1_flop = 2.0 * R * D * H;
    Table t;
    table_init(&t, 4, "what (the model's own code)", "OpenBLAS ms", "other ms", "other / OpenBLAS");
    static const char *what[3] = { "fc1: linear_forward", "train_step, baseline", "train_step, all four" };
    for (int k = 0; k < 3; k++) {
        table_cell(&t, "%s", what[k]);
        table_cell(&t, "%.2f", ms[2 * k]);
        table_cell(&t, "%.2f", ms[2 * k + 1]);
        table_cell(&t, "%.2fx", ms[2 * k + 1] / ms[2 * k]);
    }
    table_print(&t);
    printf("\nfc1 (%dx%d)x(%dx%d) in the model's blocks: OpenBLAS %.1f GFLOP/s, other %.1f GFLOP/s\n", R, D, D, H,
           fc1_flop * 1e-6 / ms[0], fc1_flop * 1e-6 / ms[1]);
    printf("cblas_sgemm calls received: OpenBLAS %ld, other %ld\n", (long)calls_to[OPENBLAS], (long)calls_to[OTHER]);

    // Same arithmetic, different rounding: the last steps' losses must agree
    // closely, or the swap broke something.
    int bad = 0;
    for (int v = 0; v < 2; v++) {
        double a = steps[2 * v].ts.loss, c = steps[2 * v + 1].ts.loss;
        printf("last step's loss, %s: OpenBLAS %.6f, other %.6f\n", v ? "all four" : "baseline", a, c);
        if (!(fabs(a - c) <= 1e-3 * fabs(a))) bad = 1;
    }
    float diff = 0;
    for (long i = 0; i < (long)R * H; i++) diff = fmaxf(diff, fabsf(out[0][i] - out[1][i]));
    printf("fc1 outputs: largest difference %.2e%s\n", diff,
           diff == 0 ? " (the same bits: is --lib the same library as OpenBLAS?)" : "");
    if (bad || !(diff < 1e-3f)) {
        fprintf(stderr, "blas_race: the two libraries disagree by more than rounding\n");
        return 1;
    }
    return 0;
}
