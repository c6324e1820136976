// ffn.c: the GELU FFN and SwiGLU with the model's layers (see ffn.h).
#include "ffn.h"

#include <stdlib.h>
#include <string.h>
#include "nn/layers.h"

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
    f->R = R; f->D = m->cfg.dim; f->H = cfg_mlp_hidden(&m->cfg);
    f->p = &m->p.blocks[0]; f->g = &m->g.blocks[0];
    size_t RD = (size_t)R * f->D, RH = (size_t)R * f->H;
    f->x = x; f->dy = dy;
    f->y = malloc(sizeof(float) * RD); f->dx = malloc(sizeof(float) * RD);
    f->pre = malloc(sizeof(float) * RH); f->val = malloc(sizeof(float) * RH);
    f->act = malloc(sizeof(float) * RH); f->dpre = malloc(sizeof(float) * RH);
    f->dval = malloc(sizeof(float) * RH); f->dact = malloc(sizeof(float) * RH);
}

void ffn_free(Ffn *f) {
    free(f->y); free(f->dx); free(f->pre); free(f->val);
    free(f->act); free(f->dpre); free(f->dval); free(f->dact);
}

void gelu_ffn_forward(Ffn *f) {
    linear_forward(f->pre, f->x, f->p->fc1_w, f->p->fc1_b, f->R, f->D, f->H);   // (R, H)
    gelu_forward(f->act, f->pre, (size_t)f->R * f->H);
    linear_forward(f->y, f->act, f->p->fc2_w, f->p->fc2_b, f->R, f->H, f->D);   // (R, D)
}

void swiglu_ffn_forward(Ffn *f) {
    linear_forward(f->pre, f->x, f->p->w1_w, f->p->w1_b, f->R, f->D, f->H);     // gate (R, H)
    linear_forward(f->val, f->x, f->p->w2_w, f->p->w2_b, f->R, f->D, f->H);     // value (R, H)
    swiglu_forward(f->act, f->pre, f->val, (size_t)f->R * f->H);
    linear_forward(f->y, f->act, f->p->w3_w, f->p->w3_b, f->R, f->H, f->D);     // (R, D)
}

// The backward passes run the forward in reverse. Every backward function
// accumulates, so the input gradients are zeroed first, as the model does.
void gelu_ffn_backward(Ffn *f) {
    size_t RH = (size_t)f->R * f->H;
    memset(f->dact, 0, sizeof(float) * RH);
    memset(f->dpre, 0, sizeof(float) * RH);
    memset(f->dx, 0, sizeof(float) * f->R * f->D);
    linear_backward(f->dact, f->g->fc2_w, f->g->fc2_b, f->dy, f->act, f->p->fc2_w, f->R, f->H, f->D);
    gelu_backward(f->dpre, f->dact, f->pre, RH);
    linear_backward(f->dx, f->g->fc1_w, f->g->fc1_b, f->dpre, f->x, f->p->fc1_w, f->R, f->D, f->H);
}

void swiglu_ffn_backward(Ffn *f) {
    size_t RH = (size_t)f->R * f->H;
    memset(f->dact, 0, sizeof(float) * RH);
    memset(f->dpre, 0, sizeof(float) * RH);
    memset(f->dval, 0, sizeof(float) * RH);
    memset(f->dx, 0, sizeof(float) * f->R * f->D);
    linear_backward(f->dact, f->g->w3_w, f->g->w3_b, f->dy, f->act, f->p->w3_w, f->R, f->H, f->D);
    swiglu_backward(f->dpre, f->dval, f->dact, f->pre, f->val, RH);
    // x feeds both projections, so its gradient is the sum of the two
    linear_backward(f->dx, f->g->w1_w, f->g->w1_b, f->dpre, f->x, f->p->w1_w, f->R, f->D, f->H);
    linear_backward(f->dx, f->g->w2_w, f->g->w2_b, f->dval, f->x, f->p->w2_w, f->R, f->D, f->H);
}

void gelu_ffn_step(void *p) { gelu_ffn_forward(p); gelu_ffn_backward(p); }
void swiglu_ffn_step(void *p) { swiglu_ffn_forward(p); swiglu_ffn_backward(p); }

void gelu_mid_step(void *p) {
    Ffn *f = p;
    size_t RH = (size_t)f->R * f->H;
    gelu_forward(f->act, f->pre, RH);
    memset(f->dpre, 0, sizeof(float) * RH);
    gelu_backward(f->dpre, f->dact, f->pre, RH);
}

void swiglu_mid_step(void *p) {
    Ffn *f = p;
    size_t RH = (size_t)f->R * f->H;
    swiglu_forward(f->act, f->pre, f->val, RH);
    memset(f->dpre, 0, sizeof(float) * RH);
    memset(f->dval, 0, sizeof(float) * RH);
    swiglu_backward(f->dpre, f->dval, f->dact, f->pre, f->val, RH);
}
