// options.c: step3_qknorm's command line (common/io/args.h's convention).
#include <getopt.h>
#include <stdio.h>
#include "step3.h"
#include "io/args.h"
#include "io/figure.h"

static void usage(FILE *f) {
    fprintf(f, "usage: step3_qknorm [--figures DIR | --no-figures] [--help]\n"
               "  QK-norm: attention logits of growing q and k, the x10 weights check,\n"
               "  and the bound sqrt(head_dim) on the logits.\n"
               "  --figures DIR   where the pictures go (default %s):\n"
               "                  step3_logit_growth (largest logit against the q, k scale)\n"
               "                  and step3_attention_maps (one head's attention), .tsv .gp .png\n"
               "  --no-figures    draw nothing\n", figure_default_dir());
}

int step3_parse_options(int argc, char **argv, const char **figures_dir) {
    static const struct option opts[] = { ARGS_FIGURE_OPTIONS, { 0, 0, 0, 0 } };
    *figures_dir = figure_default_dir();
    optind = 0;
    opterr = 0;
    // step 3 has no options of its own: all are the shared ones
    int rc = ARGS_OK;
    for (int c; rc == ARGS_OK && (c = getopt_long(argc, argv, "h", opts, NULL)) != -1;)
        rc = args_figure_option(c, usage, argv, figures_dir);
    return rc != ARGS_OK ? rc : args_no_leftovers(usage, argc, argv);
}
