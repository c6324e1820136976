// options.c: step5_rope2d's command line (common/io/args.h's convention).
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include "step5.h"
#include "io/args.h"
#include "io/figure.h"

static void usage(FILE *f) {
    fprintf(f,
        "usage: step5_rope2d [--seed N] [--figures DIR | --no-figures] [--help]\n"
        "  2D rotary position embeddings on TinyDiT's 8x8 grid of patches:\n"
        "  the cos/sin tables, the relative-position property, why base 100,\n"
        "  prefix tokens, and the switch that turns RoPE on in a training run.\n"
        "  --seed N   seed of the random query and key vectors (default 0)\n"
        "  --figures DIR  where the figures go (default %s):\n"
        "             step5_scores (q.k at every offset), step5_angles (each pair's\n"
        "             angle across the grid), each as .tsv data, .gp script and .png\n"
        "  --no-figures  no figures\n"
        "  --help     this text\n", figure_default_dir());
}


int step5_parse_options(int argc, char **argv, Options *o) {
    static const struct option opts[] = {
        { "seed", required_argument, 0, 's' }, ARGS_FIGURE_OPTIONS, { 0, 0, 0, 0 },
    };
    *o = (Options){ 0, figure_default_dir() };
    optind = 0;
    opterr = 0;
    int rc = ARGS_OK;
    for (int c; rc == ARGS_OK && (c = getopt_long(argc, argv, "h", opts, NULL)) != -1;) {
        switch (c) {
        case 's':
            if (parse_int_in(optarg, 0, INT_MAX, &o->seed) != 0)
                return args_error(usage, "--seed wants an integer in 0..%d", INT_MAX);
            break;
        default: rc = args_figure_option(c, usage, argv, &o->figures_dir);   // the shared options, or an unknown one
        }
    }
    return rc != ARGS_OK ? rc : args_no_leftovers(usage, argc, argv);
}
