// train_probe.c: the probe classifier behind probe-FD (common/eval/probe.h):
// the shipped one shown and measured again, or one trained (--help says more).
//
// Every probe-FD is the shipped probe's; it was trained on two threads, into
// models/:
//   OMP_NUM_THREADS=2 ./build/tools/train_probe --train --out models/probe_classifier.safetensors
//   cd models && sha256sum probe_classifier.safetensors > probe_classifier.safetensors.sha256
#include "io/args.h"
#include "io/blas_kernel.h"
#include "io/cifar.h"
#include "eval/probe.h"
#include <stdio.h>

typedef struct {
    bool train;
    const char *out;
} Options;

static int parse(int argc, char **argv, Options *o) {
    *o = (Options){ false, NULL };
    ArgOption opts[] = {
        ARG_FLAG("train", &o->train, true, "train a probe by the project's recipe (minutes) instead"),
        ARG_STRING("out", "FILE", &o->out, "with --train: save it to FILE"),
        ARG_END,
    };
    const ArgSpec spec = {
        .program = "train_probe", .options = opts,
        .about = "  the shipped probe classifier (" PROBE_SHIPPED "): its key, weights and\n"
                 "  test accuracy, measured again on $CIFAR_DIR's test set; or, with --train, a probe\n"
                 "  trained here by the project's recipe. Every probe-FD is the shipped probe's\n"
                 "  (common/eval/probe.h).",
    };
    int rc = args_parse(&spec, argc, argv);
    if (rc == ARGS_OK && o->out && !o->train) return args_error(NULL, "--out goes with --train");
    if (rc == ARGS_OK && o->train && !o->out)
        return args_error(NULL, "--train needs --out FILE, where to save the probe (--out " PROBE_SHIPPED
                          " replaces the shipped one)");
    return rc;
}

// The shipped probe's test accuracy measured again, when the data is there.
static void measure_again(const Probe *p) {
    char err[4600];
    CifarSet test;
    if (cifar_load_test(NULL, &test, err, sizeof err) != 0) {
        printf("test accuracy not measured again: %s\n", err);
        return;
    }
    printf("test accuracy measured now: %.2f%% of %d images\n", 100.0 * probe_accuracy(p, &test), test.n);
    cifar_free(&test);
}

// A probe trained by the project's recipe and saved to out; NULL with err.
static Probe *train(const char *out, char *err, size_t errlen) {
    CifarSet train, test = { 0 };
    ProbeRecipe r = probe_default_recipe();
    Probe *p = NULL;
    if (cifar_load_train(NULL, &train, err, errlen) != 0 || cifar_load_test(NULL, &test, err, errlen) != 0) goto done;
    if (!(p = probe_train(&train, &test, &r, 1))) {
        snprintf(err, errlen, "out of memory");
        goto done;
    }
    probe_cache_key(&r, &train, &test, p->key);
    if (probe_save(p, &r, out, err, errlen) != 0) { probe_free(p); p = NULL; }
    else printf("saved %s\n", out);
done:
    cifar_free(&train);
    cifar_free(&test);
    return p;
}

int main(int argc, char **argv) {
    restart_fitted(argv);   // OpenBLAS's kernel and OpenMP's waiting: io/blas_kernel.h
    Options o;
    int rc = parse(argc, argv, &o);
    if (rc != ARGS_OK) return args_exit_code(rc);
    char err[4600];
    Probe *p = o.train ? train(o.out, err, sizeof err) : probe_for_scoring(0, err, sizeof err);
    if (!p) { fprintf(stderr, "error: %s\n", err); return 1; }
    printf("%s: key %s, weights %s, test accuracy %.2f%% (recorded), trained in %.1f s\n",
           o.train ? "probe" : PROBE_SHIPPED, p->key, p->weights, 100.0 * p->test_acc, (double)p->train_seconds);
    if (!o.train) measure_again(p);
    probe_free(p);
    return 0;
}
