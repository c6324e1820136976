// options.c: step1_scorecard's command line, as data (common/io/args.h).
#include <stdio.h>
#include "step1.h"
#include "io/args.h"
#include "io/figure.h"
#include "io/paths.h"

int step1_parse_options(int argc, char **argv, Step1Options *o) {
    *o = (Step1Options){ .plan = { PRESET_QUICK, 2, 0, default_runs_dir(), figure_default_dir() } };
    bool trains[4] = { false };   // --preset, --seeds, --threads, --out: train the baseline
    ArgOption opts[] = {
        ARG_PRESET(&o->plan.preset),
        ARG_INT("seeds", "N", &o->plan.seeds, 2, STEP1_MAX_SEEDS, "baseline seeds to train"),
        ARG_INT("threads", "N", &o->plan.threads, 0, 4096, "OpenMP threads for training, 0 for all cores"),
        ARG_FOLDER("out", "DIR", &o->plan.out_dir, "where the baseline runs live"),
        ARG_FIGURES(&o->plan.figures),
        ARG_END,
    };
    for (int i = 0; i < 4; i++) opts[i].seen = &trains[i];
    opts[4].seen = &o->figures_given;   // with no arguments the scorecard draws only if asked
    const ArgSpec spec = {
        .program = "step1_scorecard", .options = opts, .more = preset_describe,
        .words = "[RUN_DIR...]", .word_v = &o->paths, .word_n = &o->npaths,
        .about =
            "With no arguments: the scorecard of the committed baseline seeds, " COMMITTED_RUNS "/p11_base_s*\n"
            "(trains nothing, writes nothing; --figures DIR draws their figures into DIR).\n"
            "\n"
            "With --preset, --seeds, --threads or --out: trains the baseline with seeds 0 .. N-1 at preset P (or\n"
            "finds the runs finished, or continues them where they stopped), reads any further\n"
            "baseline seed that is finished, and prints the four numbers of each run, the seed\n"
            "gap and the noise over the seeds. The runs are DIR/step1_base_s<k> at the quick\n"
            "preset (step1_smoke_s<k>, step1_tutorial_s<k> at the others); finished runs\n"
            "DIR/p11_base_s<k> of step 6 are used instead when they are the baseline at preset P.\n"
            "\n"
            "With run folders (or metrics.json files): prints their scorecard, the seed gap of\n"
            "any two that are one config at two seeds, and the noise of each such group, and\n"
            "draws the figures of the largest group (smoke runs draw into the figures' smoke/).",
    };
    int rc = args_parse(&spec, argc, argv);
    if (rc != ARGS_OK) return rc;
    o->preset_given = trains[0];
    o->train = trains[0] || trains[1] || trains[2] || trains[3];
    // smoke runs draw into a folder of their own: they never write over the
    // figures of real runs
    static char smoke_figures[4096];
    if (o->plan.preset == PRESET_SMOKE && !o->figures_given && o->plan.figures) {
        snprintf(smoke_figures, sizeof smoke_figures, "%s/smoke", o->plan.figures);
        o->plan.figures = smoke_figures;
    }
    if (o->npaths > 0 && o->preset_given) {
        args_error(NULL, "--preset chooses the baseline runs to train; it does not go with run folders");
        args_usage(&spec, stderr);
        return ARGS_BAD;
    }
    return ARGS_OK;
}
