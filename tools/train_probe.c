// train_probe.c: trains the probe classifier behind probe-FD once (or finds
// it in the cache) and prints its test accuracy and training time.
//
//   CIFAR_DIR=/path/to/cifar-10-batches-bin ./build/tools/train_probe
//   ./build/tools/train_probe epochs=6 lr=0.003     (another recipe, another key)
//
// The cache is $TINYDIT_CACHE, else the project's runs/.cache (see common/eval/probe.h).
#include "io/cifar.h"
#include "eval/probe.h"
#include "io/blas_kernel.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void usage(void) {
    ProbeRecipe r = probe_default_recipe();
    fprintf(stderr, "usage: train_probe [key=value ...]\n"
                    "  epochs=%d batch=%d lr=%g weight_decay=%g flip=%d seed=%llu\n"
                    "data: $CIFAR_DIR (now %s); cache: $TINYDIT_CACHE (now %s)\n",
            r.epochs, r.batch, (double)r.lr, (double)r.weight_decay, r.flip,
            (unsigned long long)r.seed, cifar_dir(), probe_cache_dir());
}

int main(int argc, char **argv) {
    blas_use_fitting_kernel(argv);   // OpenBLAS on a CPU newer than it: io/blas_kernel.h
    ProbeRecipe r = probe_default_recipe();
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *eq = strchr(a, '=');
        if (!eq) { usage(); return 2; }
        const char *v = eq + 1;
        size_t k = (size_t)(eq - a);
        if (k == 6 && !strncmp(a, "epochs", k)) r.epochs = atoi(v);
        else if (k == 5 && !strncmp(a, "batch", k)) r.batch = atoi(v);
        else if (k == 2 && !strncmp(a, "lr", k)) r.lr = strtof(v, NULL);
        else if (k == 12 && !strncmp(a, "weight_decay", k)) r.weight_decay = strtof(v, NULL);
        else if (k == 4 && !strncmp(a, "flip", k)) r.flip = atoi(v);
        else if (k == 4 && !strncmp(a, "seed", k)) r.seed = strtoull(v, NULL, 10);
        else { fprintf(stderr, "unknown key in '%s'\n", a); usage(); return 2; }
    }
    if (r.epochs < 1 || r.batch < 1 || !(r.lr > 0)) {
        fprintf(stderr, "need epochs >= 1, batch >= 1, lr > 0\n");
        return 2;
    }

    char err[CIFAR_ERRLEN];
    CifarSet train, test;
    if (cifar_load_train(NULL, &train, err, sizeof(err)) != 0 ||
        cifar_load_test(NULL, &test, err, sizeof(err)) != 0) {
        fprintf(stderr, "train_probe: %s\n", err);
        return 1;
    }
    Probe *p = probe_get_or_train(NULL, &train, &test, &r, 1, err, sizeof(err));
    if (!p) {
        fprintf(stderr, "train_probe: %s\n", err);
        return 1;
    }
    printf("probe %s: test accuracy %.2f%%, training time %.1f s\n", p->key,
           100.0 * p->test_acc, (double)p->train_seconds);
    // Measured again from the weights in hand: a cached file that loads but
    // holds the wrong weights would show here.
    printf("test accuracy measured now: %.2f%%\n", 100.0 * probe_accuracy(p, &test));
    probe_free(p);
    cifar_free(&train);
    cifar_free(&test);
    return 0;
}
