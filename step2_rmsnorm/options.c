// options.c: step2_rmsnorm's command line, as data (common/io/args.h).
#include "step2.h"
#include "io/args.h"
#include "io/figure.h"

static const char *const ABOUT =
    "  LayerNorm vs RMSNorm: what they do to tokens, a check of rmsnorm_forward\n"
    "  by what RMSNorm must do, and timings. Figures: step2_norm_outputs\n"
    "  (the two norms' outputs as histograms) and step2_norm_times (the timings\n"
    "  as bars), each as .tsv data, .gp script and .png.";

int step2_parse_options(int argc, char **argv, Options *o) {
    *o = (Options){ .rounds = 51, .threads = 1, .figures_dir = figure_default_dir() };
    const ArgOption opts[] = {
        ARG_INT("rounds", "N", &o->rounds, 1, 1000, "timed rounds per function; each time is their median"),
        ARG_INT("threads", "N", &o->threads, 1, 1000, "OpenMP threads for the timings"),
        ARG_END,
    };
    return args_parse_step("step2_rmsnorm", ABOUT, opts, &o->figures_dir, argc, argv);
}
