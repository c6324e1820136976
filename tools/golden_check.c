// golden_check: `make golden [GOLDEN_DIR=dir]` compares the C model with every
// *.safetensors golden file in dir (default tests/golden), one line per file
// with its worst errors.
// Exit 0 when every file passes, 1 on any miss, 2 on bad usage or no files.
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "eval/golden.h"

static int by_name(const void *a, const void *b) {
    return strcmp(*(char *const *)a, *(char *const *)b);
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: %s GOLDEN_DIR\n", argv[0]);
        return 2;
    }
    DIR *d = opendir(argv[1]);
    if (!d) {
        fprintf(stderr, "golden_check: cannot open %s (the golden files are in tests/golden; "
                        "`make golden-files` writes them with tools/tinydit_ref.py)\n", argv[1]);
        return 2;
    }
    char *names[512]; int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) && n < 512) {
        size_t len = strlen(e->d_name);
        if (len > 12 && strcmp(e->d_name + len - 12, ".safetensors") == 0) names[n++] = strdup(e->d_name);
    }
    closedir(d);
    if (n == 0) { fprintf(stderr, "golden_check: no *.safetensors in %s\n", argv[1]); return 2; }
    qsort(names, n, sizeof names[0], by_name);
    printf("tolerances: loss %.0e rel, output/grads/sample %.0e of max |ref|, AdamW %.1f%% of lr on the file's "
           "gradients, %.0f%% end to end (e2e)\n", GOLDEN_TOL_LOSS, GOLDEN_TOL_OUT, GOLDEN_TOL_ADAMW_STEPS * 100,
           GOLDEN_TOL_ADAMW * 100);
    printf("%-24s %9s %9s %9s %9s %9s %9s  %s\n", "file", "loss", "output", "grads", "adamw/lr", "e2e/lr", "sample", "verdict");
    int failed = 0;
    for (int i = 0; i < n; i++) {
        char path[4096], err[512];
        snprintf(path, sizeof path, "%s/%s", argv[1], names[i]);
        GoldenReport r;
        if (golden_compare(path, &r, err, sizeof err) != 0) {
            printf("%-24s ERROR: %s\n", names[i], err);
            failed++;
        } else {
            printf("%-24s %9.2e %9.2e %9.2e %9.2e %9.2e %9.2e  %s%s%s\n", names[i], r.loss_rel, r.out_err,
                   r.grad_err, r.adamw_err, r.adamw_e2e_err, r.sample_err, r.pass ? "ok" : "MISS",
                   r.pass ? "" : " worst grad: ", r.pass ? "" : r.grad_worst);
            if (r.adamw_steps) {
                printf("  %d AdamW steps, adamw/lr:", r.adamw_steps);
                for (int k = 0; k < r.adamw_steps; k++) printf(" %.2e", r.adamw_step_err[k]);
                printf("  e2e/lr:");
                for (int k = 0; k < r.adamw_steps; k++) printf(" %.2e", r.adamw_step_e2e[k]);
                printf("  (%ld weights unresolved)\n", r.adamw_step_unresolved);
            }
            if (!r.pass) {   // which column is over its tolerance, by how much
                failed++;
                printf("  over the tolerance:");
                const char *col[] = { "loss", "output", "grads", "adamw/lr", "e2e/lr", "sample" };
                double got[] = { r.loss_rel, r.out_err, r.grad_err, r.adamw_err, r.adamw_e2e_err, r.sample_err };
                double tol[] = { GOLDEN_TOL_LOSS, GOLDEN_TOL_OUT, GOLDEN_TOL_GRAD, GOLDEN_TOL_ADAMW_STEPS,
                                 GOLDEN_TOL_ADAMW, GOLDEN_TOL_SAMPLE };
                for (int c = 0; c < 6; c++)
                    if (!(got[c] <= tol[c])) printf(" %s %.2e > %.0e%s%s", col[c], got[c], tol[c],
                                                    c == 2 ? " (worst: " : "", c == 2 ? r.grad_worst : "");
                for (int c = 0; c < 6; c++) if (c == 2 && !(got[c] <= tol[c])) printf(")");
                printf("\n");
            }
        }
        free(names[i]);
    }
    printf("%d passed, %d failed\n", n - failed, failed);
    return failed ? 1 : 0;
}
