// run_config.c: the tutorial's run and the check of a run's settings (see
// run_config.h).
#include "run_config.h"
#include "nn/errors.h"

#include <math.h>
#include <string.h>

RunConfig run_config_default(void) {
    RunConfig r;
    memset(&r, 0, sizeof r);   // no stray padding bytes: configs compare with memcmp in tests
    r.seed = 0;
    r.data_seed = -1;
    r.lr = 3e-4f;
    r.weight_decay = 0.0f;
    r.batch = 128;
    r.flip = true;
    r.label_drop = 0.1f;
    r.steps = 4000;
    r.val_every = 0;
    r.threads = 0;
    r.guidance = 1.0f;
    return r;
}

unsigned long long run_data_seed(const RunConfig *r) {
    return r->data_seed < 0 ? r->seed : (unsigned long long)r->data_seed;
}

int run_config_check(const RunConfig *r, char *err, size_t errlen) {
    if (!isfinite(r->lr)) return errorf(err, errlen, "lr is not a finite number");
    if (!isfinite(r->weight_decay)) return errorf(err, errlen, "weight_decay is not a finite number");
    if (!(r->lr > 0)) return errorf(err, errlen, "lr=%g: must be > 0", r->lr);
    if (!(r->weight_decay >= 0)) return errorf(err, errlen, "weight_decay=%g: must be >= 0", r->weight_decay);
    if (!(r->label_drop >= 0 && r->label_drop <= 1))
        return errorf(err, errlen, "label_drop=%g: must be a probability in [0, 1]", r->label_drop);
    if (!(r->guidance >= 0 && isfinite(r->guidance)))
        return errorf(err, errlen, "guidance=%g: must be a finite number >= 0", r->guidance);
    const struct { const char *key; int value, min; } ints[] = {
        {"data_seed", r->data_seed, -1}, {"batch", r->batch, 1}, {"steps", r->steps, 0}, {"val_every", r->val_every, 0}, {"threads", r->threads, 0},
    };
    for (size_t i = 0; i < sizeof ints / sizeof ints[0]; i++)
        if (ints[i].value < ints[i].min)
            return errorf(err, errlen, "%s=%d: must be >= %d", ints[i].key, ints[i].value, ints[i].min);
    return 0;
}
