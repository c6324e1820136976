// gradcheck.c: the whole model's gradients against finite differences
// (gradcheck.h), group by group in the order the backward pass reaches them.
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "gradcheck.h"
#include "rng.h"

void grad_check_weights(Model *m, unsigned long long seed) {
    model_init_weights(m, seed);
    for (int i = 0; i < m->n_tensors; i++)
        if (m->tensors[i].kind == PARAM_GAIN)
            for (size_t j = 0; j < m->tensors[i].size; j++)
                m->params[m->tensors[i].offset + j] = 1.0f + 0.1f * (float)((int)(j % 5) - 2);
    Rng w;
    rng_seed(&w, 13);
    for (int i = 0; i < m->n_tensors; i++)
        if (m->tensors[i].init == INIT_ZERO)
            rng_fill_uniform(&w, m->params + m->tensors[i].offset, (long)m->tensors[i].size, -0.3f, 0.3f);
}

// The chunks of a block's ada output, by row (model.c's ada_chunks), and
// of the final layer's ada_f: what each chunk's gradient is the gradient of.
static const char *const ADA_PLAIN_CHUNKS[] = { "shift_a", "scale_a", "shift_m", "scale_m" };
static const char *const ADA_ZERO_CHUNKS[] = { "shift_a", "scale_a", "gate_a", "shift_m", "scale_m", "gate_m" };
static const char *const ADA_FINAL[] = { "shift_f", "scale_f" };

// Where in a block's backward each part gets its gradient, first to last:
// block_backward undoes the MLP half, then the attention half.
static int rank_in_block(const char *rest) {
    static const struct { const char *name; int rank; } ORDER[] = {
        { "gate_m", 0 }, { "mlp.fc2.", 1 }, { "mlp.w3.", 1 }, { "mlp.fc1.", 2 }, { "mlp.w1.", 2 }, { "mlp.w2.", 2 },
        { "shift_m", 3 }, { "scale_m", 3 }, { "gate_a", 4 }, { "attn.proj.", 5 }, { "attn.q_norm", 6 },
        { "attn.k_norm", 6 }, { "attn.qkv.", 7 }, { "shift_a", 8 }, { "scale_a", 8 },
    };
    for (size_t i = 0; i < sizeof ORDER / sizeof ORDER[0]; i++)
        if (strncmp(rest, ORDER[i].name, strlen(ORDER[i].name)) == 0) return ORDER[i].rank;
    return 9;
}

// A group's place in the backward pass: the head, the final layer's shift
// and scale, the blocks from the last to the first, then what the residual
// stream and the condition flow into (a tensor named nowhere here: last).
static int rank_of(const Model *m, const char *name, const char *chunk) {
    int b;
    if (strncmp(name, "head.", 5) == 0) return 0;
    if (strncmp(name, "ada_f.", 6) == 0) return 1;
    if (sscanf(name, "blocks.%d.", &b) == 1) {
        const char *rest = strchr(name + 7, '.') + 1;
        return 10 + 10 * (m->cfg.depth - 1 - b) + rank_in_block(chunk ? chunk : rest);
    }
    if (strncmp(name, "pos_", 4) == 0 || strncmp(name, "patch_embed.", 12) == 0) return 10000;
    if (strncmp(name, "t_fc2.", 6) == 0) return 10001;
    if (strncmp(name, "t_fc1.", 6) == 0) return 10002;
    return 20000;
}

typedef struct { GradGroup g; int rank, order; } Ranked;

static int by_rank(const void *a, const void *b) {
    const Ranked *x = a, *y = b;
    return x->rank != y->rank ? (x->rank > y->rank) - (x->rank < y->rank) : x->order - y->order;
}

int grad_groups(const Model *m, GradGroup *out, int max) {
    Ranked *r = malloc(sizeof(Ranked) * (size_t)(m->n_tensors * 6 + 1));
    if (!r) return 0;
    int n = 0;
    for (int i = 0; i < m->n_tensors; i++) {
        const ParamTensor *T = &m->tensors[i];
        int in_block = T->block >= 0 && strstr(T->name, ".ada.") != NULL, final = strncmp(T->name, "ada_f.", 6) == 0;
        const char *const *chunks = final ? ADA_FINAL : m->cfg.ada == ADA_ZERO ? ADA_ZERO_CHUNKS : ADA_PLAIN_CHUNKS;
        int n_chunks = final ? 2 : in_block ? cfg_ada_chunks(&m->cfg) : 1;
        size_t per_row = T->ndim == 2 ? (size_t)T->shape[1] : 1, rows = (size_t)T->shape[0] / n_chunks;
        for (int k = 0; k < n_chunks; k++) {
            Ranked *x = &r[n++];
            x->g.tensor = T;
            x->g.size = rows * per_row;
            x->g.offset = T->offset + (size_t)k * x->g.size;
            if (n_chunks == 1) snprintf(x->g.name, sizeof x->g.name, "%s", T->name);
            else snprintf(x->g.name, sizeof x->g.name, "%s, %s%s", T->name, T->ndim == 2 ? "rows of " : "",
                          chunks[k]);
            x->rank = rank_of(m, T->name, n_chunks == 1 ? NULL : chunks[k]);
            x->order = n;
        }
    }
    qsort(r, n, sizeof r[0], by_rank);
    if (n > max) n = max;
    for (int i = 0; i < n; i++) out[i] = r[i].g;
    free(r);
    return n;
}

void grad_check_group(Model *m, const GradGroup *g, const float *grads, double (*loss)(void *), void *ctx,
                      int probes, float h, GradCheck *r) {
    const float *a = grads + g->offset;
    memset(r, 0, sizeof *r);
    for (size_t j = 0; j < g->size; j++) if (fabs(a[j]) > r->scale) r->scale = fabs(a[j]);
    int np = g->size < (size_t)probes ? (int)g->size : probes;
    double *num = malloc(sizeof(double) * (size_t)(np > 0 ? np : 1));
    size_t *idx = malloc(sizeof(size_t) * (size_t)(np > 0 ? np : 1));
    for (int k = 0; k < np; k++) {
        idx[k] = np > 1 ? (size_t)k * (g->size - 1) / (size_t)(np - 1) : 0;
        float *x = m->params + g->offset + idx[k], keep = *x;
        *x = keep + h; double fp = loss(ctx);
        *x = keep - h; double fm = loss(ctx);
        *x = keep;
        num[k] = (fp - fm) / (2.0 * h);
        if (fabs(num[k]) > r->scale) r->scale = fabs(num[k]);
    }
    r->probes = np;
    for (int k = 0; k < np && r->scale > 0.0; k++) {
        double e = fabs(a[idx[k]] - num[k]) / r->scale;
        if (!(e <= r->worst) && !isnan(r->worst)) {   // the first NaN sticks
            r->worst = e;
            r->worst_at = idx[k];
            r->backward = a[idx[k]];
            r->numeric = num[k];
        }
    }
    free(num);
    free(idx);
}
