// config.c: the tutorial's defaults, the SwiGLU hidden width, and the checks
// that a model's sizes fit together.
#include "config.h"
#include "errors.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

// ---------------------------------------------------------------------------
// Defaults: the tutorial's model

ModelConfig model_config_default(void) {
    ModelConfig c;
    memset(&c, 0, sizeof c);   // no stray padding bytes: configs compare with memcmp in tests
    c.img = 32; c.channels = 3; c.patch = 4;
    c.dim = 128; c.depth = 4; c.heads = 4;
    c.mlp_ratio = 4.0f;
    c.freq_dim = 256;
    c.norm = NORM_LAYERNORM;
    c.qk_norm = false;
    c.mlp = MLP_GELU;
    c.mlp_multiple_of = 1;
    c.pos = POS_LEARNED;
    c.rope_base = 100.0f;
    c.bias = true;
    c.ada = ADA_PLAIN;
    c.classes = 0;
    return c;
}

// GELU: int(mlp_ratio * D). SwiGLU: int(2 * mlp_ratio * D / 3) so that its
// three matrices hold about as many weights as GELU's two, then rounded up to
// a multiple of mlp_multiple_of (hardware-friendly widths, e.g. 64).
// Computed in double, like the Python reference, so that 2*4*384/3 is exactly
// 1024 and not 1023.9999.
int cfg_mlp_hidden(const ModelConfig *c) {
    if (c->mlp == MLP_SWIGLU) {
        int h = (int)(2.0 * (double)c->mlp_ratio * c->dim / 3.0);
        int m = c->mlp_multiple_of;
        // In long long: h + m - 1 overflows an int when m is near INT_MAX
        // (fuzz/regressions/config/); model_config_check refuses what is too big.
        if (m > 1) {
            long long r = (long long)m * (((long long)h + m - 1) / m);
            h = r > INT_MAX ? INT_MAX : (int)r;
        }
        return h;
    }
    return (int)((double)c->mlp_ratio * c->dim);
}

// ---------------------------------------------------------------------------
// Checks

int model_config_check(const ModelConfig *c, char *err, size_t errlen) {
    // Each field alone (a ModelConfig may be filled in by hand, not by the parser).
    const struct { const char *key; int value, min; } sizes[] = {
        {"img", c->img, 1}, {"channels", c->channels, 1}, {"patch", c->patch, 1},
        {"dim", c->dim, 1}, {"depth", c->depth, 1}, {"heads", c->heads, 1},
        {"freq_dim", c->freq_dim, 2}, {"mlp_multiple_of", c->mlp_multiple_of, 1},
    };
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
        if (sizes[i].value < sizes[i].min)
            return errorf(err, errlen, "%s=%d: must be >= %d", sizes[i].key, sizes[i].value, sizes[i].min);
    if (c->depth > TINYDIT_MAX_DEPTH)
        return errorf(err, errlen, "depth=%d: at most %d blocks", c->depth, TINYDIT_MAX_DEPTH);
    if (c->classes < 0 || c->classes > TINYDIT_MAX_CLASSES)
        return errorf(err, errlen, "classes=%d: must be 0 (unconditional) to %d", c->classes, TINYDIT_MAX_CLASSES);
    if ((unsigned)c->norm > NORM_RMSNORM) return errorf(err, errlen, "norm has an invalid value %d", (int)c->norm);
    if ((unsigned)c->mlp > MLP_SWIGLU) return errorf(err, errlen, "mlp has an invalid value %d", (int)c->mlp);
    if ((unsigned)c->pos > POS_ROPE2D) return errorf(err, errlen, "pos has an invalid value %d", (int)c->pos);
    if ((unsigned)c->ada > ADA_ZERO) return errorf(err, errlen, "ada has an invalid value %d", (int)c->ada);
    if (!isfinite(c->mlp_ratio)) return errorf(err, errlen, "mlp_ratio is not a finite number");
    if (!isfinite(c->rope_base)) return errorf(err, errlen, "rope_base is not a finite number");
    if (!(c->mlp_ratio > 0)) return errorf(err, errlen, "mlp_ratio=%g: must be > 0", c->mlp_ratio);
    if (!(c->rope_base > 0)) return errorf(err, errlen, "rope_base=%g: must be > 0", c->rope_base);

    if (c->img % c->patch != 0)
        return errorf(err, errlen, "img=%d is not a multiple of patch=%d", c->img, c->patch);
    if (c->dim % c->heads != 0)
        return errorf(err, errlen, "dim=%d is not a multiple of heads=%d", c->dim, c->heads);
    int hd = cfg_head_dim(c);
    // Rotary and rms pairs work on (2i, 2i+1): an odd head_dim has no partner.
    if (hd % 2 != 0)
        return errorf(err, errlen, "head_dim = dim/heads = %d must be even", hd);
    // 2-D RoPE gives half the pairs to rows and half to columns.
    if (c->pos == POS_ROPE2D && hd % 4 != 0)
        return errorf(err, errlen, "pos=rope2d needs head_dim = dim/heads = %d to be a multiple of 4", hd);
    if (c->freq_dim % 2 != 0)
        return errorf(err, errlen, "freq_dim=%d must be even (cos and sin halves)", c->freq_dim);
    // Guard the products the model allocates with: they must fit in an int.
    // Checked by division, so that the check itself cannot overflow: img *
    // img * channels overflows even a long long for img near 2^31 (found by
    // `make fuzz`: --set img=1999199992 passed). With img^2 * channels in an
    // int, patch_dim = channels * patch^2 (patch <= img) fits one too.
    if (c->dim > INT_MAX / 6 || c->img > INT_MAX / c->img || c->img * c->img > INT_MAX / c->channels ||
        (long long)cfg_patch_dim(c) * c->dim > INT_MAX)
        return errorf(err, errlen, "sizes too large (dim=%d img=%d channels=%d)", c->dim, c->img, c->channels);
    double hidden = (c->mlp == MLP_SWIGLU ? 2.0 * c->mlp_ratio / 3.0 : c->mlp_ratio) * c->dim;
    if (hidden > INT_MAX / 4)
        return errorf(err, errlen, "mlp hidden width %.0f is too large", hidden);
    if (cfg_mlp_hidden(c) < 1)
        return errorf(err, errlen, "mlp hidden width is %d (mlp_ratio=%g, dim=%d): must be >= 1",
                    cfg_mlp_hidden(c), c->mlp_ratio, c->dim);
    // after SwiGLU's rounding up to a multiple of mlp_multiple_of
    if (cfg_mlp_hidden(c) > INT_MAX / 4 || (long long)cfg_mlp_hidden(c) * c->dim > INT_MAX)
        return errorf(err, errlen, "mlp hidden width %d (mlp_multiple_of=%d) is too large for dim=%d",
                    cfg_mlp_hidden(c), c->mlp_multiple_of, c->dim);
    return 0;
}
