#!/bin/sh
# ab_builds.sh OLD NEW [ROUNDS] [CONFIG] [THREADS]: the training step of two
# commits' code, timed in one process in alternating turns (the order swaps
# every round), so that the machine's drift hits both: a change of a few
# percent that two separate `lab speed` runs cannot resolve.
#
# Each commit's common/ and lab/ are built into a shared library
# (-Wl,-Bsymbolic: each calls its own functions) and loaded side by side with
# dlopen; each trains its own model (the tutorial's, batch 64) on the same
# made-up images. Prints both losses (the same, when the change keeps the
# bits) and the paired ratio new/old per round: its median and quartiles.
#   OLD, NEW  commits (anything git rev-parse takes); NEW may be "." for the
#             working tree
#   ROUNDS    timed rounds (default 30, after 3 untimed)
#   CONFIG    the ablation's configuration number (0 baseline ... 5 all four)
#   THREADS   OpenMP threads (default 2)
set -eu
[ $# -ge 2 ] || { echo "usage: scripts/ab_builds.sh OLD NEW [ROUNDS] [CONFIG] [THREADS]" >&2; exit 2; }
old=$1 new=$2 rounds=${3:-30} config=${4:-0} threads=${5:-2}
root=$(git rev-parse --show-toplevel)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

cat > "$tmp/entry.c" <<'EOF'
#include <stdlib.h>
#include "lab/lab.h"
void *ab_make(int config, int threads) {
    Config c;   // as lab speed builds its six
    if (config < 0 || config >= ABLATION_CONFIGS) return NULL;
    ablation_config_of(PRESET_TUTORIAL, config, &c);
    c.run.batch = 64;
    size_t n = (size_t)64 * 3 * 32 * 32;
    float *x1 = malloc(n * sizeof(float));
    for (size_t i = 0; i < n; i++) x1[i] = (float)((i * 2654435761u) % 2001) / 1000.0f - 1.0f;
    Racer *r = calloc(1, sizeof *r);
    if (racer_init(r, &c, x1) != 0) return NULL;
    r->threads = threads;
    return r;
}
void ab_turn(void *r) { racer_turn(r); }
double ab_loss(void *r) { return ((Racer *)r)->ts.loss; }
EOF

cat > "$tmp/harness.c" <<'EOF'
#include <dlfcn.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
typedef void *(*Make)(int, int);
typedef void (*Turn)(void *);
typedef double (*Loss)(void *);
static int by_value(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}
int main(int argc, char **argv) {
    int rounds = atoi(argv[3]), config = atoi(argv[4]), threads = atoi(argv[5]);
    Turn turn[2]; Loss loss[2]; void *run[2];
    for (int v = 0; v < 2; v++) {
        void *h = dlopen(argv[1 + v], RTLD_NOW | RTLD_LOCAL);
        if (!h) { fprintf(stderr, "%s\n", dlerror()); return 1; }
        Make make = (Make)dlsym(h, "ab_make");
        turn[v] = (Turn)dlsym(h, "ab_turn"); loss[v] = (Loss)dlsym(h, "ab_loss");
        if (!(run[v] = make(config, threads))) { fprintf(stderr, "config %d: no such run\n", config); return 1; }
    }
    double *ms[2] = { malloc(rounds * sizeof(double)), malloc(rounds * sizeof(double)) };
    double *ratio = malloc(rounds * sizeof(double));
    for (int k = -3; k < rounds; k++)
        for (int j = 0; j < 2; j++) {
            int v = (k + j) & 1;
            double t0 = omp_get_wtime();
            turn[v](run[v]);
            if (k >= 0) ms[v][k] = (omp_get_wtime() - t0) * 1e3;
        }
    for (int k = 0; k < rounds; k++) ratio[k] = ms[1][k] / ms[0][k];
    qsort(ms[0], rounds, sizeof(double), by_value); qsort(ms[1], rounds, sizeof(double), by_value);
    qsort(ratio, rounds, sizeof(double), by_value);
    printf("loss after %d steps: old %.9g, new %.9g (%s)\n", rounds + 3, loss[0](run[0]), loss[1](run[1]),
           loss[0](run[0]) == loss[1](run[1]) ? "the same" : "different");
    printf("config %d, %d threads, %d rounds: old %.1f ms, new %.1f ms a step (medians); "
           "new/old per round: median %.3f, quartiles %.3f .. %.3f\n", config, threads, rounds,
           ms[0][rounds / 2], ms[1][rounds / 2], ratio[rounds / 2], ratio[rounds / 4], ratio[3 * rounds / 4]);
    return 0;
}
EOF

build() {   # build COMMIT NAME: its common/ and lab/ as NAME.so
    mkdir -p "$tmp/$2"
    if [ "$1" = . ]; then (cd "$root" && tar -cf - common lab) | tar -xf - -C "$tmp/$2"
    else git -C "$root" archive "$1" common lab | tar -xf - -C "$tmp/$2"; fi
    src=$(ls "$tmp/$2"/common/*/*.c "$tmp/$2"/lab/*.c | grep -v '/test_\|/main\.c')
    gcc -shared -fPIC -Wl,-Bsymbolic -D_GNU_SOURCE -I"$tmp/$2" -I"$tmp/$2/common" -I/usr/include/stb \
        -I/usr/include/cjson -O3 -march=native -ffp-contract=fast -fno-trapping-math -fno-math-errno \
        -std=c11 -fopenmp $src "$tmp/entry.c" -o "$tmp/$2.so" \
        -ldnnl -lopenblas -llapacke -lcjson -lz -lm
}
build "$old" old
build "$new" new
gcc -O2 -fopenmp "$tmp/harness.c" -ldl -o "$tmp/harness"
echo "old: $(git -C "$root" rev-parse --short "$old"), new: $([ "$new" = . ] && echo 'the working tree' || git -C "$root" rev-parse --short "$new")"
env -u OPENBLAS_CORETYPE OMP_WAIT_POLICY=passive "$tmp/harness" "$tmp/old.so" "$tmp/new.so" "$rounds" "$config" "$threads"
