// options.c: step3_qknorm's command line, as data (common/io/args.h).
#include "step3.h"
#include "io/args.h"
#include "io/figure.h"

static const char *const ABOUT =
    "  QK-norm: attention logits of growing q and k, the x10 weights check, and\n"
    "  the bound sqrt(head_dim) on the logits. Figures: step3_logit_growth (largest\n"
    "  logit against the q, k scale) and step3_attention_maps (one head's attention),\n"
    "  each as .tsv data, .gp script and .png.";

int step3_parse_options(int argc, char **argv, const char **figures_dir) {
    *figures_dir = figure_default_dir();
    const ArgOption opts[] = { ARG_END };   // no options of its own besides the figures
    return args_parse_step("step3_qknorm", ABOUT, opts, figures_dir, argc, argv);
}
