// presets.c: the three presets of a run (see trainer.h).
#include <stdio.h>
#include <string.h>
#include "trainer.h"

const char *preset_name(Preset p) {
    return p == PRESET_SMOKE ? "smoke" : p == PRESET_QUICK ? "quick" : "tutorial";
}

int preset_take(const char *value, void *preset) {
    for (Preset p = PRESET_SMOKE; p <= PRESET_TUTORIAL; p++)
        if (strcmp(value, preset_name(p)) == 0) {
            *(Preset *)preset = p;
            return ARGS_OK;
        }
    return args_error(NULL, "unknown preset '%s'", value);
}

void preset_apply(Preset p, Config *cfg, int *ckpt_every) {
    *cfg = config_default();
    ModelConfig *model = &cfg->model;
    RunConfig *run = &cfg->run;
    switch (p) {
    case PRESET_SMOKE:      // seconds: a small model, for tests
        model->dim = 32; model->depth = 2; model->heads = 2; model->freq_dim = 32;
        run->batch = 16; run->steps = 60; *ckpt_every = 20;
        break;
    case PRESET_QUICK:      // minutes: the tutorial's model, half its batch, a quarter of its steps
        run->batch = 64; run->steps = 1000; *ckpt_every = 250;
        run->val_every = 250;   // four points of the val curve, about 5% of the run's time
        break;
    case PRESET_TUTORIAL:   // the tutorial's runs: dim 128, depth 4, heads 4, batch 128, 4,000 steps
        run->batch = 128; run->steps = 4000; *ckpt_every = 250;
        run->val_every = 500;
        break;
    }
}

int preset_config(Preset p, const ArgList *sets, Config *cfg, int *ckpt_every) {
    preset_apply(p, cfg, ckpt_every);
    for (int i = 0; i < sets->n; i++)
        if (strcmp(sets->v[i], "help") == 0) {
            config_print_keys(cfg, stdout);
            return ARGS_HELP;
        }
    char err[1024];
    return config_apply(cfg, sets->v, sets->n, err, sizeof err) == 0 ? ARGS_OK : args_error(NULL, "%s", err);
}

void preset_describe(FILE *f) {
    fprintf(f, "presets (how long each takes on this machine: lab/lab estimate --preset P):\n"
               "  smoke     dim 32, depth 2, heads 2, batch 16, 60 steps (a tiny model: tests the machinery)\n"
               "  quick     dim 128, depth 4, heads 4, batch 64, 1,000 steps\n"
               "  tutorial  dim 128, depth 4, heads 4, batch 128, 4,000 steps, lr 3e-4\n");
}
