// summary.c: model_print_summary, the model as a tree in the style of
// PyTorch's print(model), with each module's parameter count in a right-hand
// column, e.g.
//
//   TinyDiT(
//     (patch_embed): Linear(in_features=48, out_features=128, bias=True)        6,272
//     (pos_row, pos_col): 2 x (8, 128)                                          2,048
//     ...
//     (blocks): 4 x Block(                                                  1,055,232
//       (norm1, norm2): 2 x LayerNorm((128,), eps=1e-06, elementwise_affine=False)  0
//       (attn): Attention(                                                     66,048
//         heads=4, head_dim=32
//         (qkv): Linear(in_features=128, out_features=384, bias=True)          49,536
//       ...
//     )                                                          each block   263,808
//     ...
//   )
//   params: 1152176
//
// Module names follow the PyTorch reference (tools/tinydit_ref.py), so a
// line of the summary names the tensors of the state_dict it counts. Every
// shape and count is read from the model's tensor table, never from a formula
// of our own: the summary shows what was built, and its counts add up to the
// total by construction. The top-level counts (two-space indent) sum to
// `params`; the block's children are per block. The last line is
// "params: N", a plain integer that scripts and tests can read.
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include "model.h"

#define NORM_EPS_TEXT "1e-06"   // every norm uses eps 1e-6 (NORM_EPS in model.c)
#define MAX_LINES 64
#define LINE_LEN 192

typedef struct {
    char text[LINE_LEN];
    char count[32];   // empty: no count on this line
    int per_block;    // the count is one block's (the blocks' closing line)
} Line;

typedef struct {
    Line lines[MAX_LINES];
    int n;
} Lines;

// 1152176 -> "1,152,176"
static void group_thousands(char *out, size_t outlen, unsigned long long v) {
    char digits[32];
    int nd = snprintf(digits, sizeof digits, "%llu", v);
    size_t j = 0;
    for (int i = 0; i < nd && j + 1 < outlen; i++) {
        if (i > 0 && (nd - i) % 3 == 0 && j + 2 < outlen) out[j++] = ',';
        out[j++] = digits[i];
    }
    out[j] = '\0';
}

// Appends a line; count < 0 means none. Further lines are dropped (the tree
// has a fixed shape of under 40 lines: blocks are printed once).
__attribute__((format(printf, 3, 4)))
static Line *add_line(Lines *ls, long long count, const char *fmt, ...) {
    static Line dropped;
    if (ls->n >= MAX_LINES) return &dropped;
    Line *l = &ls->lines[ls->n++];
    memset(l, 0, sizeof *l);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(l->text, sizeof l->text, fmt, ap);
    va_end(ap);
    if (count >= 0) group_thousands(l->count, sizeof l->count, (unsigned long long)count);
    return l;
}

// Parameters of a module: every tensor whose name is `prefix` or starts with
// "prefix." (so "blocks.1" does not catch "blocks.10").
static size_t count_prefix(const Model *m, const char *prefix) {
    size_t n = 0, pl = strlen(prefix);
    for (int i = 0; i < m->n_tensors; i++) {
        const char *name = m->tensors[i].name;
        if (strncmp(name, prefix, pl) == 0 && (name[pl] == '\0' || name[pl] == '.'))
            n += m->tensors[i].size;
    }
    return n;
}

// "Linear(in_features=128, out_features=384, bias=True)" from prefix.weight
// (out, in) and whether prefix.bias exists.
static void linear_text(const Model *m, const char *prefix, char *out, size_t outlen) {
    char name[PARAM_NAME_LEN + 8];
    snprintf(name, sizeof name, "%s.weight", prefix);
    const ParamTensor *w = model_find(m, name);
    snprintf(name, sizeof name, "%s.bias", prefix);
    int has_bias = model_find(m, name) != NULL;
    if (!w) { snprintf(out, outlen, "Linear(?)"); return; }
    snprintf(out, outlen, "Linear(in_features=%d, out_features=%d, bias=%s)",
             w->shape[1], w->shape[0], has_bias ? "True" : "False");
}

// One Linear as a line: "(label): Linear(...)" and its count.
static void add_linear(Lines *ls, const Model *m, const char *indent, const char *label,
                       const char *prefix) {
    char desc[128];
    linear_text(m, prefix, desc, sizeof desc);
    add_line(ls, (long long)count_prefix(m, prefix), "%s(%s): %s", indent, label, desc);
}

// The block norm (and norm_f): no affine parameters, adaLN does the scaling.
static const char *norm_name(const Config *c) {
    return c->norm == NORM_RMSNORM ? "RMSNorm" : "LayerNorm";
}

void model_print_summary(const Model *m, FILE *f) {
    const Config *c = &m->cfg;
    Lines ls;          // ~14 KB of text, laid out once every line is known
    ls.n = 0;

    add_line(&ls, -1, "TinyDiT(");
    add_linear(&ls, m, "  ", "patch_embed", "patch_embed");
    const ParamTensor *pr = model_find(m, "pos_row"), *pc = model_find(m, "pos_col");
    if (pr && pc)
        add_line(&ls, (long long)(pr->size + pc->size), "  (pos_row, pos_col): 2 x (%d, %d)",
                 pr->shape[0], pr->shape[1]);
    if (c->pos == POS_ROPE2D)   // tables computed at build time, not parameters
        add_line(&ls, 0, "  (rope_cos, rope_sin): 2 x buffer (%d, %d), RoPE2d(grid=%d, base=%g)",
                 cfg_tokens(c), cfg_head_dim(c), cfg_grid(c), c->rope_base);
    add_linear(&ls, m, "  ", "t_fc1", "t_fc1");
    add_linear(&ls, m, "  ", "t_fc2", "t_fc2");

    // The blocks are alike: block 0 stands for all of them.
    if (c->depth > 0) {
        add_line(&ls, (long long)count_prefix(m, "blocks"), "  (blocks): %d x Block(", c->depth);
        add_line(&ls, 0, "    (norm1, norm2): 2 x %s((%d,), eps=%s, elementwise_affine=False)",
                 norm_name(c), c->dim, NORM_EPS_TEXT);
        // like PyTorch, a module's settings (extra_repr) open its body
        add_line(&ls, (long long)count_prefix(m, "blocks.0.attn"), "    (attn): Attention(");
        add_line(&ls, -1, "      heads=%d, head_dim=%d%s", c->heads, cfg_head_dim(c),
                 c->pos == POS_ROPE2D ? ", rope2d" : "");
        add_linear(&ls, m, "      ", "qkv", "blocks.0.attn.qkv");
        add_linear(&ls, m, "      ", "proj", "blocks.0.attn.proj");
        const ParamTensor *qn = model_find(m, "blocks.0.attn.q_norm.weight");
        if (qn)
            add_line(&ls, (long long)(count_prefix(m, "blocks.0.attn.q_norm") +
                                      count_prefix(m, "blocks.0.attn.k_norm")),
                     "      (q_norm, k_norm): 2 x RMSNorm((%d,), eps=%s, elementwise_affine=True)",
                     qn->shape[0], NORM_EPS_TEXT);
        add_line(&ls, -1, "    )");
        add_line(&ls, (long long)count_prefix(m, "blocks.0.mlp"), "    (mlp): MLP(");
        add_line(&ls, -1, "      %s, hidden=%d", c->mlp == MLP_SWIGLU ?
                 "SwiGLU: w3(silu(w1(x)) * w2(x))" : "GELU: fc2(gelu(fc1(x)))", cfg_mlp_hidden(c));
        if (c->mlp == MLP_SWIGLU) {
            add_linear(&ls, m, "      ", "w1", "blocks.0.mlp.w1");
            add_linear(&ls, m, "      ", "w2", "blocks.0.mlp.w2");
            add_linear(&ls, m, "      ", "w3", "blocks.0.mlp.w3");
        } else {
            add_linear(&ls, m, "      ", "fc1", "blocks.0.mlp.fc1");
            add_linear(&ls, m, "      ", "fc2", "blocks.0.mlp.fc2");
        }
        add_line(&ls, -1, "    )");
        add_linear(&ls, m, "    ", "ada", "blocks.0.ada");
        // the blocks' closing line carries the count of one block
        add_line(&ls, (long long)count_prefix(m, "blocks.0"), "  )")->per_block = 1;
    }
    add_line(&ls, 0, "  (norm_f): %s((%d,), eps=%s, elementwise_affine=False)",
             norm_name(c), c->dim, NORM_EPS_TEXT);
    add_linear(&ls, m, "  ", "ada_f", "ada_f");
    add_linear(&ls, m, "  ", "head", "head");
    add_line(&ls, -1, ")");

    // Lay out: text padded to the widest line, counts right-aligned after it;
    // the blocks' closing line says its count is per block.
    size_t tw = 0, cw = 0;
    for (int i = 0; i < ls.n; i++) {
        size_t t = strlen(ls.lines[i].text), k = strlen(ls.lines[i].count);
        if (t > tw) tw = t;
        if (k > cw) cw = k;
    }
    for (int i = 0; i < ls.n; i++) {
        const Line *l = &ls.lines[i];
        if (!l->count[0]) { fprintf(f, "%s\n", l->text); continue; }
        fprintf(f, "%-*s  %s%*s\n", (int)tw, l->text, l->per_block ? "each block " : "           ",
                (int)cw, l->count);
    }
    fprintf(f, "params: %zu\n", m->n_params);
}
