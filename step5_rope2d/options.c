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
        { "seed", required_argument, 0, 's' },    { "figures", required_argument, 0, 'f' },
        { "no-figures", no_argument, 0, 'n' },    { "help", no_argument, 0, 'h' },
        { 0, 0, 0, 0 },
    };
    *o = (Options){ 0, figure_default_dir() };
    optind = 0;
    opterr = 0;
    for (int c; (c = getopt_long(argc, argv, "h", opts, NULL)) != -1;) {
        switch (c) {
        case 's':
            if (parse_int_in(optarg, 0, INT_MAX, &o->seed) != 0)
                return args_error(usage, "--seed wants an integer in 0..%d", INT_MAX);
            break;
        case 'f':
            if (!*optarg) return args_error(usage, "--figures wants a folder");
            o->figures_dir = optarg;
            break;
        case 'n': o->figures_dir = NULL; break;
        case 'h': usage(stdout); return ARGS_HELP;
        default: return args_unknown(usage, argv);
        }
    }
    if (optind < argc) return args_error(usage, "unknown argument '%s'", argv[optind]);
    return ARGS_OK;
}
