// options.c: step2_rmsnorm's command line (common/io/args.h's convention).
#include <getopt.h>
#include <stdio.h>
#include "step2.h"
#include "io/args.h"
#include "io/figure.h"

static void usage(FILE *f) {
    fprintf(f, "usage: step2_rmsnorm [--rounds N] [--threads N] [--figures DIR | --no-figures] [--help]\n"
               "  LayerNorm vs RMSNorm: what they do to tokens, a check of\n"
               "  rmsnorm_forward against the formula in double, and timings.\n"
               "  --rounds N      timed rounds per function (default 51); each\n"
               "                  reported time is the median over the rounds\n"
               "  --threads N     OpenMP threads for the timings (default 1)\n"
               "  --figures DIR   where the pictures go (default %s):\n"
               "                  step2_norm_outputs (the two norms' outputs as histograms)\n"
               "                  and step2_norm_times (the timings as bars), .tsv .gp .png\n"
               "  --no-figures    draw nothing\n", figure_default_dir());
}


int step2_parse_options(int argc, char **argv, Options *o) {
    static const struct option opts[] = {
        { "rounds", required_argument, 0, 'r' }, { "threads", required_argument, 0, 't' },
        ARGS_FIGURE_OPTIONS,                     { 0, 0, 0, 0 },
    };
    *o = (Options){ .rounds = 51, .threads = 1, .figures_dir = figure_default_dir() };
    optind = 0;
    opterr = 0;
    int rc = ARGS_OK;
    for (int c; rc == ARGS_OK && (c = getopt_long(argc, argv, "h", opts, NULL)) != -1;) {
        switch (c) {
        case 'r':
        case 't':
            if (parse_int_in(optarg, 1, 1000, c == 'r' ? &o->rounds : &o->threads) != 0)
                return args_error(usage, "%s wants a number from 1 to 1000", c == 'r' ? "--rounds" : "--threads");
            break;
        default: rc = args_figure_option(c, usage, argv, &o->figures_dir);   // the shared options, or an unknown one
        }
    }
    return rc != ARGS_OK ? rc : args_no_leftovers(usage, argc, argv);
}
