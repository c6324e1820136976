// options.c: step5_rope2d's command line, as data (common/io/args.h).
#include <limits.h>
#include "step5.h"
#include "io/args.h"
#include "io/figure.h"

static const char *const ABOUT =
    "  2D rotary position embeddings on TinyDiT's 8x8 grid of patches: the cos/sin\n"
    "  tables, the relative-position property, why base 100, prefix tokens, and the\n"
    "  switch that turns RoPE on in a training run. Figures: step5_scores (q.k at\n"
    "  every offset), step5_angles (each pair's angle across the grid), each as .tsv\n"
    "  data, .gp script and .png.";

int step5_parse_options(int argc, char **argv, Options *o) {
    *o = (Options){ 0, figure_default_dir() };
    const ArgOption opts[] = {
        ARG_INT("seed", "N", &o->seed, 0, INT_MAX, "seed of the random query and key vectors"),
        ARG_END,
    };
    return args_parse_step("step5_rope2d", ABOUT, opts, &o->figures_dir, argc, argv);
}
