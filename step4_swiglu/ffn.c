// ffn.c: the GELU FFN and SwiGLU as the model runs them (see ffn.h).
#include "ffn.h"
#include "step4.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "io/config_parse.h"
#include "nn/layers.h"
#include "nn/matmul.h"

FfnCount ffn_count(const Model *m) {
    FfnCount c = {0, 0};
    const char *prefix = "blocks.0.mlp.";
    for (int i = 0; i < m->n_tensors; i++) {
        const ParamTensor *t = &m->tensors[i];
        if (strncmp(t->name, prefix, strlen(prefix)) != 0) continue;
        if (t->ndim == 2) c.weights += t->size; else c.biases += t->size;
    }
    return c;
}

void ffn_alloc(Ffn *f, const Model *m, int R, float *x, float *dy) {
    f->R = R; f->D = m->cfg.dim; f->H = cfg_mlp_hidden(&m->cfg); f->kind = m->cfg.mlp;
    f->p = &m->p.blocks[0]; f->g = &m->g.blocks[0];
    size_t RD = (size_t)R * f->D, RH = (size_t)R * f->H;
    int swiglu = f->kind == MLP_SWIGLU;   // only SwiGLU has a value half
    f->x = x; f->dy = dy;
    f->y = malloc(sizeof(float) * RD); f->dx = malloc(sizeof(float) * RD);
    f->h = (MlpHidden){ malloc(sizeof(float) * RH), swiglu ? malloc(sizeof(float) * RH) : NULL,
                        malloc(sizeof(float) * RH) };
    f->dh = (MlpHidden){ malloc(sizeof(float) * RH), swiglu ? malloc(sizeof(float) * RH) : NULL,
                         malloc(sizeof(float) * RH) };
}

void ffn_free(Ffn *f) {
    free(f->y); free(f->dx);
    free(f->h.pre); free(f->h.val); free(f->h.act);
    free(f->dh.pre); free(f->dh.val); free(f->dh.act);
}

void ffn_forward(Ffn *f) {
    const BlockParams *p = f->p;
    if (f->kind == MLP_SWIGLU)
        swiglu_mlp_forward(f->y, f->h, f->x, p->w1_w, p->w1_b, p->w2_w, p->w2_b, p->w3_w, p->w3_b,
                           f->R, f->D, f->H);
    else
        gelu_mlp_forward(f->y, f->h, f->x, p->fc1_w, p->fc1_b, p->fc2_w, p->fc2_b, f->R, f->D, f->H);
}

// dx accumulates (in the model the residual's share is already in it), so
// alone it starts from zero; the MLP's backward clears its hidden gradients.
void ffn_backward(Ffn *f) {
    memset(f->dx, 0, sizeof(float) * f->R * f->D);
    const BlockParams *p = f->p;
    BlockParams *g = f->g;
    if (f->kind == MLP_SWIGLU)
        swiglu_mlp_backward(f->dx, g->w1_w, g->w1_b, g->w2_w, g->w2_b, g->w3_w, g->w3_b, f->dh, f->dy,
                            f->x, f->h, p->w1_w, p->w2_w, p->w3_w, f->R, f->D, f->H,
                            ADD_TO_DINP);
    else
        gelu_mlp_backward(f->dx, g->fc1_w, g->fc1_b, g->fc2_w, g->fc2_b, f->dh, f->dy, f->x, f->h,
                          p->fc1_w, p->fc2_w, f->R, f->D, f->H, ADD_TO_DINP);
}

void ffn_step(void *p) { ffn_forward(p); ffn_backward(p); }

// The activation between the matrices, forward and backward, on what a full
// step left in the buffers.
void ffn_mid_step(void *p) {
    Ffn *f = p;
    size_t RH = (size_t)f->R * f->H;
    if (f->kind == MLP_SWIGLU) {   // cleared as the MLP's backward clears them (layers.c)
        swiglu_forward(f->h.act, f->h.pre, f->h.val, RH);
        parallel_clear(f->dh.pre, RH);
        parallel_clear(f->dh.val, RH);
        swiglu_backward(f->dh.pre, f->dh.val, f->dh.act, f->h.pre, f->h.val, RH);
    } else {
        gelu_forward(f->h.act, f->h.pre, RH);
        gelu_backward(f->dh.pre, f->dh.act, f->h.pre, RH, CLEAR_DINP);
    }
}

// ---------------------------------------------------------------------------
// The models the sections take their FFNs from (step4.h).
void step4_build(Model *m, Config cfg, const char *const *sets, int nsets) {
    for (int i = 0; i < nsets; i++) config_set_or_exit(&cfg, sets[i]);
    char err[256];
    if (model_build(m, &cfg.model, err, sizeof err) != 0) { fprintf(stderr, "model_build: %s\n", err); exit(1); }
}

void step4_init(Step4 *s) {
    const char *gelu_set[] = { "mlp=gelu" }, *swiglu_set[] = { "mlp=swiglu" };
    s->def = config_default();
    step4_build(&s->gelu, s->def, gelu_set, 1);
    step4_build(&s->swiglu, s->def, swiglu_set, 1);
    model_init_weights(&s->gelu, 0);
    model_init_weights(&s->swiglu, 0);
    s->D = s->def.model.dim;
    s->L = cfg_tokens(&s->def.model);
    s->H_gelu = cfg_mlp_hidden(&s->gelu.cfg);
    s->H_swiglu = cfg_mlp_hidden(&s->swiglu.cfg);
    rng_seed(&s->rng, 0);
}
