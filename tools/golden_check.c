// golden_check: `make golden [GOLDEN_DIR=dir]` compares the C model with every
// *.safetensors golden file in dir (default tests/golden), one line per file
// with its worst errors and its margin (the smallest tolerance / error), and
// for a file over a tolerance, which quantity crossed which tolerance.
// Exit 0 when every file passes, 1 on any miss, 2 on bad usage or no files.
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "eval/golden.h"
#include "io/blas_kernel.h"
#include "nn/matmul.h"

static int is_golden_file(const struct dirent *e) {
    size_t len = strlen(e->d_name);
    return len > 12 && strcmp(e->d_name + len - 12, ".safetensors") == 0;
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: %s GOLDEN_DIR\n", argv[0]);
        return 2;
    }
    struct dirent **files;
    int n = scandir(argv[1], &files, is_golden_file, alphasort);   // the C locale: byte order
    if (n < 0) {
        fprintf(stderr, "golden_check: cannot open %s (the golden files are in tests/golden; "
                        "`make golden-files` writes them with tools/tinydit_ref.py)\n", argv[1]);
        return 2;
    }
    if (n == 0) { fprintf(stderr, "golden_check: no *.safetensors in %s\n", argv[1]); return 2; }
    char blas[256];
    blas_kernel_describe(blas, sizeof blas);
    printf("kernels: %s; %s\n", matmul_about(), blas);
    golden_print_header(stdout);
    int failed = 0;
    for (int i = 0; i < n; i++) {
        const char *name = files[i]->d_name;
        char path[4096], err[512];
        snprintf(path, sizeof path, "%s/%s", argv[1], name);
        GoldenReport r;
        if (golden_compare(path, &r, err, sizeof err) != 0) {
            printf("%-24s ERROR: %s\n", name, err);
            failed++;
        } else {
            golden_print(stdout, name, &r);
            failed += !r.pass;
        }
        free(files[i]);
    }
    free(files);
    printf("%d passed, %d failed\n", n - failed, failed);
    return failed ? 1 : 0;
}
