// options.c: step4_swiglu's command line (common/io/args.h's convention).
#include <getopt.h>
#include <stdio.h>
#include "step4.h"
#include "io/args.h"
#include "io/figure.h"

static void usage(FILE *f) {
    fprintf(f,
        "usage: step4_swiglu [--rounds N] [--batch N] [--figures DIR | --no-figures] [--help]\n"
        "  GELU FFN vs SwiGLU: shapes and parameter counts (D = 128, and D = 384\n"
        "  without biases), time per forward + backward, the whole model's counts.\n"
        "  --rounds N   timed rounds per call (default 9); each reported time is the\n"
        "               median over the rounds\n"
        "  --batch N    images in the timed batch, 64 tokens each (default 64)\n"
        "  --figures DIR  where the figures go (default %s):\n"
        "               step4_activations (GELU and SiLU), step4_params (parameters\n"
        "               against hidden width), each as .tsv data, .gp script and .png\n"
        "  --no-figures no figures\n"
        "  --help       this text\n", figure_default_dir());
}


int step4_parse_options(int argc, char **argv, Options *o) {
    static const struct option opts[] = {
        { "rounds", required_argument, 0, 'r' }, { "batch", required_argument, 0, 'b' },
        ARGS_FIGURE_OPTIONS,                     { 0, 0, 0, 0 },
    };
    *o = (Options){ 9, 64, figure_default_dir() };   // 64 images: the quick preset's batch
    optind = 0;
    opterr = 0;
    int rc = ARGS_OK;
    for (int c; rc == ARGS_OK && (c = getopt_long(argc, argv, "h", opts, NULL)) != -1;) {
        switch (c) {
        case 'r':
            if (parse_int_in(optarg, 1, 1000, &o->rounds) != 0)
                return args_error(usage, "--rounds wants an integer in 1..1000, not '%s'", optarg);
            break;
        case 'b':
            if (parse_int_in(optarg, 1, 4096, &o->batch) != 0)
                return args_error(usage, "--batch wants an integer in 1..4096, not '%s'", optarg);
            break;
        default: rc = args_figure_option(c, usage, argv, &o->figures_dir);   // the shared options, or an unknown one
        }
    }
    return rc != ARGS_OK ? rc : args_no_leftovers(usage, argc, argv);
}
