// options.c: step4_swiglu's command line, as data (common/io/args.h).
#include "step4.h"
#include "io/args.h"
#include "io/figure.h"

static const char *const ABOUT =
    "  GELU FFN vs SwiGLU: shapes and parameter counts (D = 128, and D = 384 without\n"
    "  biases), time per forward + backward, the whole model's counts. Figures:\n"
    "  step4_activations (GELU and SiLU), step4_params (parameters against hidden\n"
    "  width), each as .tsv data, .gp script and .png.";

int step4_parse_options(int argc, char **argv, Options *o) {
    *o = (Options){ 9, 64, figure_default_dir() };   // 64 images: the quick preset's batch
    const ArgOption opts[] = {
        ARG_INT("rounds", "N", &o->rounds, 1, 1000, "timed rounds per call; each time is their median"),
        ARG_INT("batch", "N", &o->batch, 1, 4096, "images in the timed batch, 64 tokens each"),
        ARG_END,
    };
    return args_parse_step("step4_swiglu", ABOUT, opts, &o->figures_dir, argc, argv);
}
