// ablation.h: step 6's experiment, what is trained: the configurations of
// the ablation and the names of their runs (ablation.c). Step 6 reads the
// runs back into its tables; the lab plans and starts them.
#pragma once
#include <stddef.h>

// The configurations. Each configuration differs from the baseline by the
// --set values listed, nothing else: same preset, same data, same scorecard.
// Each is trained with one or more seeds; the run of configuration c at seed
// k is one folder under runs/ (ablation_run_name):
//   the baseline   p11_base_s0, p11_base_s1, p11_base_s2, ...
//   the others     p11_rope (seed 0), p11_rope_s1, p11_rope_s2, ...
#define ABLATION_CONFIGS 9
#define ABLATION_MAX_SEEDS 16
#define ABLATION_MAX_SETS 4

typedef struct {
    const char *name;                       // folder of its seed-0 run ("p11_base": every seed suffixed)
    const char *label;                      // row of the table
    const char *sets[ABLATION_MAX_SETS + 1];// --set key=value, NULL-terminated
} AblationConfig;

extern const AblationConfig ABLATION_CONFIG[ABLATION_CONFIGS];
// The last, adaLN-Zero, is the fifth upgrade, beyond the tutorial's table:
// trained with --seeds or --only, never among the nine runs below.
enum { CFG_BASE, CFG_RMSNORM, CFG_QKNORM, CFG_SWIGLU, CFG_ROPE, CFG_ALL, CFG_BASE_LR2E3, CFG_QKNORM_LR2E3,
       CFG_ADAZERO };

// The tutorial's nine runs: the baseline at seeds 0 and 1, every other
// configuration at seed 0. `ablation` with no --seeds trains these.
#define ABLATION_RUNS 9
typedef struct {
    const char *name;                       // folder under runs/
    const char *label;                      // row of the table
    int config, seed;
} AblationRun;

extern const AblationRun ABLATION[ABLATION_RUNS];
enum { RUN_BASE_S0, RUN_BASE_S1, RUN_RMSNORM, RUN_QKNORM, RUN_SWIGLU, RUN_ROPE, RUN_ALL,
       RUN_BASE_LR2E3, RUN_QKNORM_LR2E3 };

// The folder name of configuration c at seed k.
void ablation_run_name(int config, int seed, char *out, size_t outlen);
// The other way round: 0 with *config and *seed, or -1 if no run has this name.
int ablation_run_parse(const char *name, int *config, int *seed);
// How many seeds configuration c trains with --seeds n: n, and at least two
// for the baseline, whose seed pair is the tutorial's yardstick; adaLN-Zero,
// beyond the tutorial's nine, none at n = 1 (the default).
int ablation_config_seeds(int config, int n);
