// options.c: step5_rope2d's command line, as data (common/io/args.h).
#include <limits.h>
#include "step5.h"
#include "io/args.h"
#include "io/figure.h"

int step5_parse_options(int argc, char **argv, Options *o) {
    *o = (Options){ 0, figure_default_dir() };
    const ArgOption opts[] = {
        ARG_INT("seed", "N", &o->seed, 0, INT_MAX, "seed of the random query and key vectors"),
        ARG_FIGURES(&o->figures_dir),
        ARG_END,
    };
    const ArgSpec spec = {
        .program = "step5_rope2d", .options = opts,
        .about = "  2D rotary position embeddings on TinyDiT's 8x8 grid of patches: the cos/sin\n"
                 "  tables, the relative-position property, why base 100, prefix tokens, and the\n"
                 "  switch that turns RoPE on in a training run. Figures: step5_scores (q.k at\n"
                 "  every offset), step5_angles (each pair's angle across the grid), each as .tsv\n"
                 "  data, .gp script and .png.",
    };
    return args_parse(&spec, argc, argv);
}
