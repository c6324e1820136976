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
    static const struct option opts[] = {
        { "figures", required_argument, 0, 'f' }, { "no-figures", no_argument, 0, 'n' },
        { "help", no_argument, 0, 'h' },          { 0, 0, 0, 0 },
    };
    *figures_dir = figure_default_dir();
    optind = 0;
    opterr = 0;
    for (int c; (c = getopt_long(argc, argv, "h", opts, NULL)) != -1;) {
        switch (c) {
        case 'f':
            if (!*optarg) return args_error(usage, "--figures wants a folder");
            *figures_dir = optarg;
            break;
        case 'n': *figures_dir = NULL; break;
        case 'h': usage(stdout); return ARGS_HELP;
        default: return args_unknown(usage, argv);
        }
    }
    if (optind < argc) return args_error(usage, "unknown argument '%s'", argv[optind]);
    return ARGS_OK;
}
