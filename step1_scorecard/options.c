// options.c: step1_scorecard's command line (common/io/args.h's convention).
#include <getopt.h>
#include <stdio.h>
#include "step1.h"
#include "io/args.h"
#include "io/figure.h"
#include "io/paths.h"

static void usage(FILE *f) {
    fprintf(f,
        "usage: step1_scorecard [--figures DIR]\n"
        "       step1_scorecard [--preset P] [--seeds N] [--threads N] [--out DIR]\n"
        "                       [--figures DIR | --no-figures]\n"
        "       step1_scorecard RUN_DIR [RUN_DIR...]\n"
        "\n"
        "With no arguments: the scorecard of the committed baseline seeds, %s/p11_base_s*\n"
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
        "draws the figures of the largest group.\n"
        "\n"
        "options:\n"
        "  --preset P      smoke | quick | tutorial (default quick)\n"
        "  --seeds N       baseline seeds to train, 2 or more (default 2)\n"
        "  --threads N     OpenMP threads for training (default 0: all cores)\n"
        "  --out DIR       where the baseline runs live (default %s)\n"
        "  --figures DIR   where the figures go (default %s; smoke runs: its smoke/)\n"
        "  --no-figures    draw nothing\n"
        "  --help          this text\n"
        "\n", COMMITTED_RUNS, default_runs_dir(), figure_default_dir());
    preset_describe(f);
}

int step1_parse_options(int argc, char **argv, Step1Options *o) {
    static const struct option opts[] = {
        { "preset", required_argument, 0, 'p' },  { "threads", required_argument, 0, 't' },
        { "seeds", required_argument, 0, 's' },   { "out", required_argument, 0, 'o' },
        ARGS_FIGURE_OPTIONS,                      { 0, 0, 0, 0 },
    };
    *o = (Step1Options){ .plan = { PRESET_QUICK, 2, 0, default_runs_dir(), figure_default_dir() } };
    optind = 0;
    opterr = 0;
    int rc = ARGS_OK;
    for (int c; rc == ARGS_OK && (c = getopt_long(argc, argv, "h", opts, NULL)) != -1;) {
        switch (c) {
        case 'p':
            if (preset_parse(optarg, &o->plan.preset) != 0) return args_error(usage, "unknown preset '%s'", optarg);
            o->preset_given = o->train = true;
            break;
        case 't':
            o->train = true;
            if (parse_int_in(optarg, 0, 4096, &o->plan.threads) != 0)
                return args_error(usage, "--threads wants a whole number >= 0, not '%s'", optarg);
            break;
        case 's':
            o->train = true;
            if (parse_int_in(optarg, 2, STEP1_MAX_SEEDS, &o->plan.seeds) != 0)
                return args_error(usage, "--seeds wants a whole number from 2 to %d, not '%s'", STEP1_MAX_SEEDS, optarg);
            break;
        case 'o': o->plan.out_dir = optarg; o->train = true; break;
        // its own --figures: main needs to know it was given (with no
        // arguments the scorecard draws only if asked)
        case 'f': o->plan.figures = optarg; o->figures_given = true; break;
        default: rc = args_figure_option(c, usage, argv, &o->plan.figures);   // --no-figures, --help, or an unknown option
        }
    }
    if (rc != ARGS_OK) return rc;
    // smoke runs draw into a folder of their own: they never write over the
    // figures of real runs
    static char smoke_figures[4096];
    if (o->plan.preset == PRESET_SMOKE && !o->figures_given && o->plan.figures) {
        snprintf(smoke_figures, sizeof smoke_figures, "%s/smoke", o->plan.figures);
        o->plan.figures = smoke_figures;
    }
    // what is left are run folders (getopt_long moved them to the end)
    o->paths = argv + optind;
    o->npaths = argc - optind;
    if (o->npaths > 0 && o->preset_given)
        return args_error(usage, "--preset chooses the baseline runs to train; it does not go with run folders");
    return ARGS_OK;
}
