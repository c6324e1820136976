// parity.c: our layers against PyTorch's reference files (see parity.h).
#include "parity.h"
#include "nn/errors.h"

#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include "io/paths.h"
#include "nn/layers.h"
#include "nn/model.h"

double parity_rel_err(const float *ours, const StTensor *ref, size_t *at) {
    double diff = 0.0, big = 0.0;
    size_t worst = 0;
    for (size_t i = 0; i < ref->numel; i++) {
        double d = fabs((double)ours[i] - ref->data[i]);
        if (!(d <= diff) && !isnan(diff)) { diff = d; worst = i; }   // the first NaN sticks
        big = fmax(big, fabs((double)ref->data[i]));
    }
    if (at) *at = worst;
    return big > 0.0 ? diff / big : diff;
}

// One result against PyTorch's: the pass's worst error (forward or
// backward) and, where it is the worst so far, the element that makes it.
static void judge(Parity *p, int backward, const float *ours, const StTensor *ref) {
    size_t at;
    double e = parity_rel_err(ours, ref, &at);
    double *worst = backward ? &p->backward : &p->forward;
    if (e <= *worst || isnan(*worst)) return;   // a NaN sticks
    *worst = e;
    snprintf(backward ? p->backward_worst : p->forward_worst, sizeof p->forward_worst,
             "%s[%zu]: got %.6g, expected %.6g (off by %.3g)", ref->name, at, ours[at], ref->data[at],
             ours[at] - ref->data[at]);
}

#define REF "the reference file"   // how a message names it

static float *zeros(size_t n) { return calloc(n ? n : 1, sizeof(float)); }

// The file's tensor "<variant>.<what>" ("rmsnorm.out", "qknorm.dqkv"), of n
// values (0: any).
static const StTensor *need(const SafeTensors *st, const char *variant, const char *what, size_t n,
                            char *err, size_t errlen) {
    char name[160];
    snprintf(name, sizeof name, "%s.%s", variant, what);
    return st_need(st, REF, name, n, err, errlen);
}

// Names what PyTorch computed with (metadata "V.torch", "torch.version",
// "V.note"), and starts the comparison at zero error.
static void describe(Parity *p, const SafeTensors *st, const char *variant) {
    p->forward = p->backward = 0.0;
    p->forward_worst[0] = p->backward_worst[0] = '\0';
    char key[64];
    snprintf(key, sizeof key, "%s.torch", variant);
    const char *against = st_meta(st, key), *version = st_meta(st, "torch.version");
    snprintf(key, sizeof key, "%s.note", variant);
    const char *note = st_meta(st, key);
    snprintf(p->against, sizeof p->against, "%s", against ? against : variant);
    snprintf(p->torch, sizeof p->torch, "torch %s%s%s", version ? version : "?",
             note ? ", " : "", note ? note : "");
}

// ---------------------------------------------------------------------------
// Step 2: LayerNorm (no affine parameters, as the blocks use it) or
// RMSNorm with a gain, on input.x (R, D).

int parity_norm(const SafeTensors *st, NormKind kind, Parity *p, char *err, size_t errlen) {
    const char *name = NORM_NAMES[kind];   // the reference file's prefix: "rmsnorm.", "layernorm."
    const StTensor *x = st_need(st, REF, "input.x", 0, err, errlen);
    if (!x || x->ndim != 2) { if (x) snprintf(err, errlen, "input.x is not (R, D)"); return -1; }
    int R = (int)x->shape[0], D = (int)x->shape[1];
    size_t n = x->numel;
    const StTensor *gain = NULL, *dout, *ref_out, *ref_dx, *ref_dgain = NULL;   // LayerNorm has no gain
    if (kind == NORM_RMSNORM && !(gain = st_need(st, REF, "input.gain", D, err, errlen))) return -1;
    if (!(dout = st_need(st, REF, "upstream.dout", n, err, errlen)) || !(ref_out = need(st, name, "out", n, err, errlen)) ||
        !(ref_dx = need(st, name, "dx", n, err, errlen))) return -1;
    if (kind == NORM_RMSNORM && !(ref_dgain = st_need(st, REF, "rmsnorm.dgain", D, err, errlen))) return -1;
    float *out = zeros(n), *dx = zeros(n), *dgain = zeros(D), *mean = zeros(R), *rstd = zeros(R);
    if (kind == NORM_RMSNORM) {
        rmsnorm_forward(out, rstd, x->data, gain->data, R, D, NORM_EPS);
        rmsnorm_backward(dx, dgain, dout->data, x->data, rstd, gain->data, R, D);
    } else {
        layernorm_forward(out, mean, rstd, x->data, R, D, NORM_EPS);
        layernorm_backward(dx, dout->data, x->data, mean, rstd, R, D);
    }
    describe(p, st, name);
    judge(p, 0, out, ref_out);
    judge(p, 1, dx, ref_dx);
    if (kind == NORM_RMSNORM) judge(p, 1, dgain, ref_dgain);
    free(out); free(dx); free(dgain); free(mean); free(rstd);
    return 0;
}

// ---------------------------------------------------------------------------
// Step 3: the attention core from qkv (N, L, 3D), without QK-norm ("plain")
// or with it ("qknorm"). The forward compares the output, the softmax
// weights (N, H, L, L) and the largest |score|; the backward dqkv and, with
// QK-norm, the two gains' gradients.

// |ours − the largest |score|| / the largest |score|.
static double max_score_err(float ours, const StTensor *scores) {
    double big = 0.0;
    for (size_t i = 0; i < scores->numel; i++) big = fmax(big, fabs((double)scores->data[i]));
    return fabs(ours - big) / big;
}

int parity_attention(const SafeTensors *st, int qk_norm, Parity *p, char *err, size_t errlen) {
    const char *v = qk_norm ? "qknorm" : "plain";
    const StTensor *qkv = st_need(st, REF, "input.qkv", 0, err, errlen), *w = need(st, v, "weights", 0, err, errlen);
    if (!qkv || !w) return -1;
    if (qkv->ndim != 3 || w->ndim != 4 || qkv->shape[2] % 3)
        return errorf(err, errlen, "input.qkv is not (N, L, 3D) or %s.weights not (N, H, L, L)", v);
    int N = (int)qkv->shape[0], L = (int)qkv->shape[1], D = (int)qkv->shape[2] / 3, H = (int)w->shape[1];
    int hd = D / H;
    size_t n_out = (size_t)N * L * D, n_att = (size_t)N * H * L * L;
    const StTensor *dout, *scores, *weights, *ref_out, *ref_dqkv, *gq = NULL, *gk = NULL, *ref_dgq = NULL, *ref_dgk = NULL;
    if (!(dout = st_need(st, REF, "upstream.dout", n_out, err, errlen)) ||
        !(scores = need(st, v, "scores", n_att, err, errlen)) || !(weights = need(st, v, "weights", n_att, err, errlen)) ||
        !(ref_out = need(st, v, "out", n_out, err, errlen)) ||
        !(ref_dqkv = need(st, v, "dqkv", qkv->numel, err, errlen))) return -1;
    if (qk_norm && (!(ref_dgq = need(st, v, "dq_gain", hd, err, errlen)) ||
                    !(ref_dgk = need(st, v, "dk_gain", hd, err, errlen)) ||
                    !(gq = st_need(st, REF, "input.q_gain", hd, err, errlen)) ||
                    !(gk = st_need(st, REF, "input.k_gain", hd, err, errlen)))) return -1;
    const float *q_gain = gq ? gq->data : NULL, *k_gain = gk ? gk->data : NULL;
    float *mem = zeros(attention_cache_floats(N, L, D, H, qk_norm));
    float *scratch = zeros(attention_backward_scratch_floats(N, L, D, H));
    float *out = zeros(n_out), *dqkv = zeros(qkv->numel), *dgq = zeros(hd), *dgk = zeros(hd);
    AttentionCache cache;
    attention_cache_init(&cache, mem, N, L, D, H, qk_norm);
    attention_forward(out, &cache, qkv->data, q_gain, k_gain, NORM_EPS, NULL, NULL, N, L, D, H);
    attention_backward(dqkv, dgq, dgk, dout->data, &cache, scratch, q_gain, k_gain, NULL, NULL, N, L, D, H,
                       ADD_TO_DINP);
    describe(p, st, v);
    judge(p, 0, out, ref_out);
    judge(p, 0, cache.att, weights);
    double score_err = max_score_err(cache.max_logit, scores);
    if (score_err > p->forward) {
        p->forward = score_err;
        snprintf(p->forward_worst, sizeof p->forward_worst, "the max logit: got %.6g, %.3g of it off torch's",
                 cache.max_logit, score_err);
    }
    judge(p, 1, dqkv, ref_dqkv);
    if (qk_norm) { judge(p, 1, dgq, ref_dgq); judge(p, 1, dgk, ref_dgk); }
    free(mem); free(scratch); free(out); free(dqkv); free(dgq); free(dgk);
    return 0;
}

// ---------------------------------------------------------------------------
// Step 4: the block's FFN, gelu_mlp_* or swiglu_mlp_* (nn/layers.c), on the file's
// weights ("gelu.fc1.weight", ...) and x (R, D). Its hidden width must be
// the model's for a TinyDiT of width D (cfg_mlp_hidden).

// A weight of the FFN: its name in the file and where BlockParams keeps it.
typedef struct { const char *name; size_t field; } FfnTensor;
static const FfnTensor GELU_TENSORS[] = {
    { "fc1.weight", offsetof(BlockParams, fc1_w) }, { "fc1.bias", offsetof(BlockParams, fc1_b) },
    { "fc2.weight", offsetof(BlockParams, fc2_w) }, { "fc2.bias", offsetof(BlockParams, fc2_b) } };
static const FfnTensor SWIGLU_TENSORS[] = {
    { "w1.weight", offsetof(BlockParams, w1_w) }, { "w1.bias", offsetof(BlockParams, w1_b) },
    { "w2.weight", offsetof(BlockParams, w2_w) }, { "w2.bias", offsetof(BlockParams, w2_b) },
    { "w3.weight", offsetof(BlockParams, w3_w) }, { "w3.bias", offsetof(BlockParams, w3_b) } };

static float **slot(BlockParams *b, size_t field) { return (float **)((char *)b + field); }

int parity_ffn(const SafeTensors *st, MlpKind kind, Parity *p, char *err, size_t errlen) {
    const char *v = MLP_NAMES[kind];       // "swiglu", "gelu"
    const FfnTensor *names = kind == MLP_SWIGLU ? SWIGLU_TENSORS : GELU_TENSORS;
    int n_names = kind == MLP_SWIGLU ? 6 : 4;
    const StTensor *weight[6], *ref_grad[6];   // "gelu.fc1.weight" and "gelu.dfc1.weight", ...
    char name[64];
    for (int i = 0; i < n_names; i++) {
        if (!(weight[i] = need(st, v, names[i].name, 0, err, errlen))) return -1;
        snprintf(name, sizeof name, "d%s", names[i].name);
        if (!(ref_grad[i] = need(st, v, name, weight[i]->numel, err, errlen))) return -1;
    }
    const StTensor *x = st_need(st, REF, "input.x", 0, err, errlen);
    if (!x) return -1;
    if (x->ndim != 2 || weight[0]->ndim != 2 || weight[0]->shape[1] != x->shape[1])
        return errorf(err, errlen, "input.x is not (R, D) or %s.%s not (H, D)", v, names[0].name);
    int R = (int)x->shape[0], D = (int)x->shape[1], H = (int)weight[0]->shape[0];
    ModelConfig c = model_config_default();
    c.dim = D; c.mlp = kind;
    if (cfg_mlp_hidden(&c) != H)
        return errorf(err, errlen, "%s is %d wide; the model's at D = %d is %d", v, H, D, cfg_mlp_hidden(&c));
    size_t RD = (size_t)R * D, RH = (size_t)R * H;
    const StTensor *dout = st_need(st, REF, "upstream.dout", RD, err, errlen), *ref_out, *ref_dx;
    if (!dout || !(ref_out = need(st, v, "out", RD, err, errlen)) || !(ref_dx = need(st, v, "dx", RD, err, errlen)))
        return -1;

    BlockParams w = { 0 }, g = { 0 };          // the file's weights, our gradients
    for (int i = 0; i < n_names; i++) {
        *slot(&w, names[i].field) = weight[i]->data;
        *slot(&g, names[i].field) = zeros(weight[i]->numel);
    }
    float *out = zeros(RD), *dx = zeros(RD);
    MlpHidden h = { zeros(RH), zeros(RH), zeros(RH) }, dh = { zeros(RH), zeros(RH), zeros(RH) };
    if (kind == MLP_SWIGLU) {
        swiglu_mlp_forward(out, h, x->data, w.w1_w, w.w1_b, w.w2_w, w.w2_b, w.w3_w, w.w3_b, R, D, H);
        swiglu_mlp_backward(dx, g.w1_w, g.w1_b, g.w2_w, g.w2_b, g.w3_w, g.w3_b, dh, dout->data, x->data, h,
                            w.w1_w, w.w2_w, w.w3_w, R, D, H, ADD_TO_DINP);
    } else {
        gelu_mlp_forward(out, h, x->data, w.fc1_w, w.fc1_b, w.fc2_w, w.fc2_b, R, D, H);
        gelu_mlp_backward(dx, g.fc1_w, g.fc1_b, g.fc2_w, g.fc2_b, dh, dout->data, x->data, h,
                          w.fc1_w, w.fc2_w, R, D, H, ADD_TO_DINP);
    }
    describe(p, st, v);
    judge(p, 0, out, ref_out);
    judge(p, 1, dx, ref_dx);
    for (int i = 0; i < n_names; i++) {
        judge(p, 1, *slot(&g, names[i].field), ref_grad[i]);
        free(*slot(&g, names[i].field));
    }
    free(out); free(dx); free(h.pre); free(h.val); free(h.act); free(dh.pre); free(dh.val); free(dh.act);
    return 0;
}

// ---------------------------------------------------------------------------
// Step 5: 2D RoPE on x (B, L, hd): our tables (rope2d_tables) against the
// file's, and the rotation forward and backward.

int parity_rope2d(const SafeTensors *st, Parity *p, char *err, size_t errlen) {
    const char *grid_s = st_meta(st, "grid"), *base_s = st_meta(st, "base");
    const StTensor *x = st_need(st, REF, "input.x", 0, err, errlen);
    if (!x) return -1;
    if (!grid_s || !base_s || x->ndim != 3)
        return errorf(err, errlen, "the reference file lacks grid or base, or input.x is not (B, L, hd)");
    int grid = atoi(grid_s), B = (int)x->shape[0], L = (int)x->shape[1], hd = (int)x->shape[2];
    if (grid * grid != L || hd % 4)
        return errorf(err, errlen, "input.x has %d tokens of %d, not a %dx%d grid of heads of 4k", L, hd, grid, grid);
    size_t n = x->numel, nt = (size_t)L * hd;
    const StTensor *dout = st_need(st, REF, "upstream.dout", n, err, errlen);
    const StTensor *ref_cos = dout ? st_need(st, REF, "rope.cos", nt, err, errlen) : NULL;
    const StTensor *ref_sin = ref_cos ? st_need(st, REF, "rope.sin", nt, err, errlen) : NULL;
    const StTensor *ref_out = ref_sin ? st_need(st, REF, "rope.out", n, err, errlen) : NULL;
    const StTensor *ref_dx = ref_out ? st_need(st, REF, "rope.dx", n, err, errlen) : NULL;
    if (!ref_dx) return -1;
    float *cos_t = zeros(nt), *sin_t = zeros(nt), *out = zeros(n), *dx = zeros(n);
    rope2d_tables(cos_t, sin_t, grid, hd, (float)atof(base_s), 0);
    rope_forward(out, x->data, cos_t, sin_t, B, L, hd);
    rope_backward(dx, dout->data, cos_t, sin_t, B, L, hd);
    describe(p, st, "rope");
    judge(p, 0, out, ref_out);
    judge(p, 0, cos_t, ref_cos);
    judge(p, 0, sin_t, ref_sin);
    judge(p, 1, dx, ref_dx);
    free(cos_t); free(sin_t); free(out); free(dx);
    return 0;
}

// ---------------------------------------------------------------------------
// The lines a step prints.

const char *parity_file(int step) {
    static const char *const files[] = { "norms", "attention", "ffn", "rope2d" };
    return step >= 2 && step <= 5 ? files[step - 2] : NULL;
}

// Runs check i of step (0 or 1; steps 2 to 4 have two, step 5 one).
// 1 when there is no such check.
static int run_check(int step, int i, const SafeTensors *st, Parity *p, char *err, size_t errlen) {
    switch (step * 10 + i) {
    case 20: return parity_norm(st, NORM_LAYERNORM, p, err, errlen);
    case 21: return parity_norm(st, NORM_RMSNORM, p, err, errlen);
    case 30: return parity_attention(st, 0, p, err, errlen);
    case 31: return parity_attention(st, 1, p, err, errlen);
    case 40: return parity_ffn(st, MLP_GELU, p, err, errlen);
    case 41: return parity_ffn(st, MLP_SWIGLU, p, err, errlen);
    case 50: return parity_rope2d(st, p, err, errlen);
    default: return 1;
    }
}

int parity_print(FILE *f, int step, const char *dir) {
    char path[1024], rel[128], err[512];
    const char *file = parity_file(step);
    if (!file) return -1;
    snprintf(rel, sizeof rel, "tests/golden/layers/%s.safetensors", file);
    if (dir) snprintf(path, sizeof path, "%s/%s.safetensors", dir, file);
    else if (project_path(path, sizeof path, rel) != 0) snprintf(path, sizeof path, "%s", rel);
    SafeTensors st;
    if (st_read(path, &st, err, sizeof err) != 0) {
        fprintf(f, "PyTorch beside C: no reference to compare with (%s).\n"
                   "   Write it with `make layer-files` (python3 tools/tinydit_ref.py layers; needs PyTorch).\n\n", err);
        return -1;
    }
    fprintf(f, "PyTorch beside C: our layers against PyTorch's on the same inputs, from\n"
               "   %s (tools/tinydit_ref.py layers);\n"
               "   error = max |ours - torch| / max |torch|, worst tensor of the pass\n\n", rel);
    int above = 0;
    Parity p;
    for (int i = 0, rc; (rc = run_check(step, i, &st, &p, err, sizeof err)) != 1; i++) {
        if (rc != 0) {
            fprintf(f, "   %s: %s\n", rel, err);
            above++;
            continue;
        }
        int ok = p.forward < PARITY_TOLERANCE && p.backward < PARITY_TOLERANCE;
        above += !ok;
        fprintf(f, "   ours vs %s (%s): forward %.1e, backward %.1e (%s)\n", p.against, p.torch,
                p.forward, p.backward, ok ? "float32 rounding" : "ABOVE the tolerance 1e-4: not the same layer");
    }
    fprintf(f, "\n");
    st_free(&st);
    return above;
}
