// options.c: step3_qknorm's command line, as data (common/io/args.h).
#include "step3.h"
#include "io/args.h"
#include "io/figure.h"

int step3_parse_options(int argc, char **argv, const char **figures_dir) {
    *figures_dir = figure_default_dir();
    const ArgOption opts[] = { ARG_FIGURES(figures_dir), ARG_END };   // no options of its own
    const ArgSpec spec = {
        .program = "step3_qknorm", .options = opts,
        .about = "  QK-norm: attention logits of growing q and k, the x10 weights check, and\n"
                 "  the bound sqrt(head_dim) on the logits. Figures: step3_logit_growth (largest\n"
                 "  logit against the q, k scale) and step3_attention_maps (one head's attention),\n"
                 "  each as .tsv data, .gp script and .png.",
    };
    return args_parse(&spec, argc, argv);
}
