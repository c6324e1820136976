// files.c: what step0_tour reads and writes besides the tour: the model
// and the test images it looks at, and `export RUN_CKPT OUT`.
#include <stdio.h>
#include <stdlib.h>
#include "step0.h"
#include "io/bench.h"
#include "io/checkpoint.h"
#include "io/checksum.h"
#include "io/config_parse.h"
#include "io/safetensors.h"

int load_tour(const Options *o, Model *m, CifarSet *test) {
    char err[ERRLEN];
    // the test set only for what needs it: the tour itself runs without data
    int need_data = o->test_image || o->val_mse, want_data = need_data || o->figures;
    if (want_data && cifar_load_test(NULL, test, err, sizeof err) != 0) {
        if (need_data) {
            fprintf(stderr, "error: --test-image and --val-mse need CIFAR-10's test set: %s\n", err);
            return 1;
        }
        fprintf(stderr, "step0_tour: %s\n", err);   // --figures: all but the flow path
    }
    double t0 = wall_seconds();
    SafeTensors st;
    if (checkpoint_load(o->model, m, &st, err, sizeof err) != 0) {
        fprintf(stderr, "error: %s\n", err);
        cifar_free(test);
        return 1;
    }
    double load_secs = wall_seconds() - t0;
    int checksums = st_checksum_count(&st);
    Config stored = { m->cfg, run_config_default() };   // the model's config and the run's that trained it
    checkpoint_config_from(&st, o->model, &stored, err, sizeof err);   // read by checkpoint_load already
    st_free(&st);
    // the test images go into buffers of the model's img and channels
    if (test->n > 0 && cifar_check_config(&m->cfg, o->model, err, sizeof err) != 0) {
        if (need_data) {
            fprintf(stderr, "error: --test-image and --val-mse need a model of CIFAR-10's shape: %s\n", err);
            cifar_free(test);
            model_free(m);
            return 1;
        }
        fprintf(stderr, "step0_tour: %s; the figures leave out the flow path\n", err);
        cifar_free(test);
    }
    char desc[1024];
    config_describe(&stored, desc, sizeof desc);
    if (checksums > 0) printf("%s: %zu parameters, checksums verified\n   %s\n", o->model_name, m->n_params, desc);
    else printf("%s: %zu parameters (the file has no checksums to verify)\n   %s\n", o->model_name, m->n_params, desc);
    if (o->timed) printf("   (--time: loaded in %.2f s)\n", load_secs);
    return 0;
}

// export: a run's checkpoint without the AdamW moments and trainer state
// (its EMA of the weights, ema.*, stays when it has one).
// Loaded and saved by the checkpoint code every program uses, so the file
// has the config in its metadata and a CRC32 per tensor like any checkpoint.
int export_weights(const char *in, const char *out) {
    char err[ERRLEN];
    Model m;
    SafeTensors st;
    if (checkpoint_load(in, &m, &st, err, sizeof err) != 0) {
        fprintf(stderr, "error: %s\n", err);
        return 1;
    }
    const char *step = st_meta(&st, "train.step"), *preset = st_meta(&st, "train.preset");
    CheckpointMeta meta[2] = { { "train.step", step ? step : "unknown" },
                               { "train.preset", preset ? preset : "unknown" } };
    Config stored;   // the run that trained it goes along with the model
    int rc = checkpoint_config_from(&st, in, &stored, err, sizeof err);
    float *ema = malloc(sizeof(float) * m.n_params);
    int has_ema = rc == 0 && ema ? checkpoint_copy_array(&st, in, CHECKPOINT_EMA, &m, ema, err, sizeof err) : 1;
    if (has_ema < 0) rc = -1;
    CheckpointArray extra = { CHECKPOINT_EMA, ema };
    if (rc == 0) rc = checkpoint_save(out, &m, &stored.run, &extra, has_ema == 0, meta, 2, err, sizeof err);
    free(ema);
    if (rc != 0) fprintf(stderr, "error: %s\n", err);
    else printf("%s: %zu parameters of %s (step %s)%s, no optimizer state\n",
                out, m.n_params, in, step ? step : "unknown", has_ema == 0 ? " and their EMA" : "");
    st_free(&st);
    model_free(&m);
    return rc == 0 ? 0 : 1;
}

