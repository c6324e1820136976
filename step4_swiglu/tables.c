// tables.c: the tables step 4's sections print (tables.h). The numbers
// come from the model's parameter table and from the timings of main.c.
#include <math.h>
#include <stdio.h>
#include "tables.h"
#include "ffn.h"
#include "io/config_parse.h"

// Their counts, from the parameter table of each model.
void ffn_counts_table(const Step4 *s) {
    int D = s->D, Hg = s->H_gelu, Hs = s->H_swiglu;
    FfnCount cg = ffn_count(&s->gelu), cs = ffn_count(&s->swiglu);
    Table t;
    table_init(&t, 5, "FFN", "shape", "weights", "biases", "params");
    table_cell(&t, "GELU");   table_cell(&t, "%d -> %d -> %d", D, Hg, D);
    table_cell(&t, "%zu", cg.weights); table_cell(&t, "%zu", cg.biases); table_cell(&t, "%zu", cg.weights + cg.biases);
    table_cell(&t, "SwiGLU"); table_cell(&t, "%d -> 2 x %d -> %d", D, Hs, D);
    table_cell(&t, "%zu", cs.weights); table_cell(&t, "%zu", cs.biases); table_cell(&t, "%zu", cs.weights + cs.biases);
    table_cell(&t, "difference"); table_cell(&t, "%s", "");
    table_cell(&t, "%+ld", (long)cs.weights - (long)cg.weights);
    table_cell(&t, "%+ld", (long)cs.biases - (long)cg.biases);
    table_cell(&t, "%+ld (%+.3f%%)", (long)(cs.weights + cs.biases) - (long)(cg.weights + cg.biases),
               100.0 * ((double)(cs.weights + cs.biases) / (cg.weights + cg.biases) - 1.0));
    table_print(&t);
}

// The rounding at three widths, from cfg_mlp_hidden.
void rounding_table(const Step4 *s) {
    Table t;
    table_init(&t, 4, "D", "2/3 x 4 x D", "int (multiple 1)", "multiple 64");
    const int dims[3] = { 128, 384, 512 };
    double asked_512 = 0.0;   // what D = 512 asks for, and the two ways to make it whole
    int cut_512 = 0, up_512 = 0;
    for (int i = 0; i < 3; i++) {
        Config c = s->def;
        char dim_kv[32];
        snprintf(dim_kv, sizeof dim_kv, "dim=%d", dims[i]);
        config_set_or_exit(&c, dim_kv);
        config_set_or_exit(&c, "mlp=swiglu");
        table_cell(&t, "%d", dims[i]);
        double asked = 2.0 * c.model.mlp_ratio * c.model.dim / 3.0;
        if (c.model.dim == 512) asked_512 = asked;
        table_cell(&t, "%.2f", asked);
        table_cell(&t, "%d", cfg_mlp_hidden(&c.model));
        if (c.model.dim == 512) cut_512 = cfg_mlp_hidden(&c.model);
        config_set_or_exit(&c, "mlp_multiple_of=64");
        table_cell(&t, "%d", cfg_mlp_hidden(&c.model));
        if (c.model.dim == 512) up_512 = cfg_mlp_hidden(&c.model);
    }
    table_print(&t);
    printf("\n   No layer is %.2f wide: int() cuts it to %d, the rule rounds it up to %d, a width that\n"
           "   suits the hardware. TinyDiT keeps mlp_multiple_of=%d, so its SwiGLU is %d wide.\n",
           asked_512, cut_512, up_512, s->def.model.mlp_multiple_of, s->H_swiglu);
}


// The table of section 3: the first three calls are whole FFNs with matmul work
// flops[i], the last two their elementwise middles.
void timing_table(const BenchFn *fns, const double *ms_call, const double *flops) {
    Table t;
    table_init(&t, 5, "call", "ms per call", "vs GELU FFN", "matmul GFLOP", "GFLOP/s");
    for (int i = 0; i < NCALLS; i++) {
        table_cell(&t, "%s", fns[i].name);
        table_cell(&t, "%.2f", ms_call[i]);
        table_cell(&t, "%.2fx", ms_call[i] / ms_call[0]);
        if (i < 3) {
            table_cell(&t, "%.3f", flops[i] / 1e9);
            table_cell(&t, "%.1f", flops[i] / 1e9 / (ms_call[i] / 1e3));
        } else {
            table_cell(&t, "-"); table_cell(&t, "-");
        }
    }
    table_print(&t);
}


// The weights at D = 384 without biases. One block is enough: the MLP of
// block 0 is the same whatever the depth.
void equal_weights_at_d384(const Step4 *s) {
    const char *gelu_nobias[] = { "dim=384", "depth=1", "bias=false", "mlp=gelu" };
    const char *swiglu_nobias[] = { "dim=384", "depth=1", "bias=false", "mlp=swiglu", "mlp_multiple_of=64" };
    const char *swiglu_bias[] = { "dim=384", "depth=1", "mlp=swiglu", "mlp_multiple_of=64" };
    const char *gelu_bias[] = { "dim=384", "depth=1", "mlp=gelu" };
    Model g384, s384, g384b, s384b;
    step4_build(&g384, s->def, gelu_nobias, 4);
    step4_build(&s384, s->def, swiglu_nobias, 5);
    step4_build(&g384b, s->def, gelu_bias, 3);
    step4_build(&s384b, s->def, swiglu_bias, 4);
    int D3 = g384.cfg.dim;
    FfnCount c3g = ffn_count(&g384), c3s = ffn_count(&s384);
    FfnCount c3gb = ffn_count(&g384b), c3sb = ffn_count(&s384b);
    printf("\n   At D = %d without biases (as GPT-style models build it), from the parameter table:\n\n", D3);
    Table t;
    table_init(&t, 3, "MLP", "shape", "weights");
    table_cell(&t, "GELU");   table_cell(&t, "%d -> %d -> %d", D3, cfg_mlp_hidden(&g384.cfg), D3);
    table_cell(&t, "%zu", c3g.weights + c3g.biases);
    table_cell(&t, "SwiGLU"); table_cell(&t, "%d -> 2 x %d -> %d", D3, cfg_mlp_hidden(&s384.cfg), D3);
    table_cell(&t, "%zu", c3s.weights + c3s.biases);
    table_print(&t);
    int H3 = cfg_mlp_hidden(&s384.cfg);
    printf("\n   %s, as 8/3 x %d = %d = %d x 64 needs no rounding: 3 x %d x %d = 2 x %d x %d.\n"
           "   With biases they would differ: GELU adds %zu, SwiGLU %zu (%zu more).\n\n",
           c3g.weights + c3g.biases == c3s.weights + c3s.biases ? "Equal" : "NOT equal",
           D3, H3, H3 / 64, D3, H3, D3, cfg_mlp_hidden(&g384.cfg),
           c3gb.biases, c3sb.biases, c3sb.biases - c3gb.biases);
    model_free(&g384); model_free(&s384); model_free(&g384b); model_free(&s384b);
}


// Section 4: the parameters of the whole model with each upgrade, by
// model_count_params. Returns the baseline's count.
size_t whole_model_table(const Config *base) {
    const Config def = *base;
    struct { const char *name, *sets[4]; int n; } variants[] = {
        { "baseline",     { NULL }, 0 },
        { "+ RMSNorm",    { "norm=rmsnorm" }, 1 },
        { "+ QK-norm",    { "qk_norm=true" }, 1 },
        { "+ SwiGLU",     { "mlp=swiglu" }, 1 },
        { "+ 2D RoPE",    { "pos=rope2d" }, 1 },
        { "all four",     { "norm=rmsnorm", "qk_norm=true", "mlp=swiglu", "pos=rope2d" }, 4 },
    };
    Table t;
    table_init(&t, 4, "variant", "--set", "params", "vs baseline");
    size_t base_count = model_count_params(&def.model);
    for (size_t v = 0; v < sizeof variants / sizeof variants[0]; v++) {
        Config c = def;
        char sets[TABLE_CELL] = "";
        for (int i = 0; i < variants[v].n; i++) {
            config_set_or_exit(&c, variants[v].sets[i]);
            // the --set column names a single switch; "all four" lists none
            if (variants[v].n == 1) snprintf(sets, sizeof sets, "%s", variants[v].sets[i]);
        }
        size_t n = model_count_params(&c.model);
        table_cell(&t, "%s", variants[v].name);
        table_cell(&t, "%s", variants[v].n == 0 ? "-" : variants[v].n == 1 ? sets : "the four above");
        table_cell(&t, "%zu", n);
        table_cell(&t, "%+ld", (long)n - (long)base_count);
    }
    table_print(&t);
    return base_count;
}
