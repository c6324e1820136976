# mk/plots.mk: the ablation from the project's root: its runs, its figures
# and its report. Included by the root Makefile.
#
#   make -j2 ablation [PRESET=quick] [RUNS=runs] [SEEDS=N]
#                             the nine runs (N seeds a configuration), as many
#                             at a time as -j says (lab ablation --jobs N)
#   make plots [RUNS=runs]    every picture: the runs' plots into RUNS/plots
#                             (scripts/plots.sh and the attention maps), each
#                             step's figures into RUNS/figures, then RUNS/report.md
#   make runs-plots [RUNS=runs]  the same without the step programs' figures
#   make report [RUNS=runs]   RUNS/report.md alone
#   make results PRESET=quick RUNS=dir [RUNNER='how the runs were scheduled']
#                             the runs without their checkpoints, with table,
#                             report, plots and README, into results/PRESET
#                             (scripts/results.sh)
#   make docs-figures [RUNS=runs] [RESULTS=results/quick]
#                             the PNGs the docs embed, into docs/figures/
#   make sweep-lr [RUNS=runs] [JOBS=1]
#                             docs/beyond.md's lr sweep at the quick preset (baseline,
#                             QK-norm, all four; two seeds), resumable, into
#                             RUNS/sweep_lr; `make sweep-figures` draws the
#                             committed one (results/sweep_lr) for docs/beyond.md
#   make sweep-lr-edge [RUNS=runs] [JOBS=1]
#                             the sweep's edge, lr 1.6e-2, with 4 seeds a
#                             configuration (2 more each), into RUNS/sweep_lr
#   make budget-swiglu [RUNS=runs] [JOBS=1]
#                             docs/beyond.md's SwiGLU-against-the-budget runs (baseline
#                             and SwiGLU, 16,000 steps, val MSE every 500, two
#                             seeds; hours), resumable, into RUNS/budget_swiglu;
#                             `make budget-figures` draws the committed one
RUNS ?= $(ROOT)/runs
STEP6_BIN = $(ROOT)/step6_ablation/step6_ablation
LAB_BIN = $(ROOT)/lab/lab

.PHONY: plots runs-plots report ablation results results-pytorch docs-figures step-figures sweep-lr sweep-lr-edge sweep-figures budget-swiglu budget-figures
plots: runs-plots
	$(MAKE) --no-print-directory step-figures FIGURES=$(abspath $(RUNS))/figures BASELINE_RUNS="$(abspath $(RUNS))"

# The runs' own pictures and the report (make tutorial calls this one: its
# step programs have drawn their figures already).
runs-plots: step1 step2 step3 step4 step5 step6 lab
	sh $(ROOT)/scripts/plots.sh $(RUNS) $(RUNS)/plots
	$(LAB_BIN) attention-maps --runs $(RUNS) || \
	    echo "plots: no attention maps: they need the finished runs p11_base_s0 and p11_rope"
	$(LAB_BIN) report $(RUNS)

# Each step program's figures into FIGURES. Step 1 draws the baseline's
# seeds found in BASELINE_RUNS (it trains nothing when given folders).
step-figures:
	@set -- $(BASELINE_RUNS)/p11_base_s*; if [ -e "$$1" ] && [ $$# -ge 2 ]; then \
	    echo "step1_scorecard $$* --figures $(FIGURES)"; \
	    $(ROOT)/step1_scorecard/step1_scorecard "$$@" --figures $(FIGURES); \
	else echo "plots: no step 1 figures: $(BASELINE_RUNS) has fewer than two p11_base_s* runs"; fi
	cd $(ROOT)/step2_rmsnorm && ./step2_rmsnorm --figures $(FIGURES)
	cd $(ROOT)/step3_qknorm && ./step3_qknorm --figures $(FIGURES)
	cd $(ROOT)/step4_swiglu && ./step4_swiglu --figures $(FIGURES)
	cd $(ROOT)/step5_rope2d && ./step5_rope2d --figures $(FIGURES)

report: lab
	$(LAB_BIN) report $(RUNS)

# The runs side by side: -jN becomes --jobs N (the lab's one launcher
# schedules them; it splits the cores between them), then the table.
# -jN is in MAKEFLAGS only while recipes run: ABL_JOBS must stay "=".
ABL_JOBS = $(or $(patsubst -j%,%,$(filter -j%,$(MAKEFLAGS))),1)
ablation: lab
	$(LAB_BIN) ablation --preset $(PRESET) --out $(abspath $(RUNS)) --jobs $(ABL_JOBS) --log $(if $(SEEDS),--seeds $(SEEDS))
	$(STEP6_BIN) table $(abspath $(RUNS))

results: step1 step6 lab
	@test -n "$(PRESET)" || { echo "make results PRESET=quick RUNS=dir"; exit 2; }
	RUNNER="$(RUNNER)" sh $(ROOT)/scripts/results.sh $(PRESET) $(RUNS)

# make results-pytorch PRESET=quick RUNS=dir: runs of tools/torch_train.py
# train into results/PRESET-pytorch, with the C runs' means set against them
results-pytorch: step6
	RUNNER="$(RUNNER)" sh $(ROOT)/scripts/results_torch.sh $(PRESET) $(RUNS)

# The docs embed committed copies of the figures (docs/figures/*.png). Step
# 1's and step 6's runs plots come from the committed results (RESULTS), the
# attention maps from RUNS (they need the checkpoints), steps 2 to 5 compute
# theirs on the spot. Drawn in build/docs-figures, then the PNGs are copied.
RESULTS ?= $(ROOT)/results/quick
DOCS_FIG := $(BUILD)/docs-figures
docs-figures: step1 step2 step3 step4 step5 step6 lab model-figures sweep-figures
	rm -rf $(DOCS_FIG) && mkdir -p $(DOCS_FIG) $(ROOT)/docs/figures
	$(MAKE) --no-print-directory step-figures FIGURES=$(abspath $(DOCS_FIG)) BASELINE_RUNS="$(abspath $(RESULTS))"
	$(LAB_BIN) attention-maps --runs $(RUNS) --out $(DOCS_FIG)
	STEP6=$(STEP6_BIN) sh $(ROOT)/scripts/plots.sh $(RESULTS) $(DOCS_FIG)/plots
	for p in val_mse_seeds loss lr2e3; do \
	    [ ! -f $(DOCS_FIG)/plots/$$p.png ] || cp $(DOCS_FIG)/plots/$$p.png $(DOCS_FIG)/step6_$$p.png; done
	cp $(DOCS_FIG)/step[1-6]_*.png $(ROOT)/docs/figures/
	@ls -l $(ROOT)/docs/figures/

# The model page's pictures (docs/tinydit.md): the block diagram from its
# Graphviz source, and step0_tour/step0_tour's three from the shipped model
# (models/tinydit_rope_tutorial.safetensors; the flow path needs CIFAR-10's
# test set) and the committed tutorial runs' samples.
MODEL_FIG := $(BUILD)/model-figures
.PHONY: model-figures
model-figures: step0
	rm -rf $(MODEL_FIG) && mkdir -p $(MODEL_FIG)
	dot -Tpng -Gdpi=90 $(ROOT)/docs/figures/tinydit_block.dot -o $(ROOT)/docs/figures/tinydit_block.png
	$(ROOT)/step0_tour/step0_tour --figures $(MODEL_FIG)
	cp $(MODEL_FIG)/tinydit_*.png $(ROOT)/docs/figures/

# The lr sweep of docs/beyond.md: its values and configurations written once,
# here; `lab/lab sweep --help` explains the options.
SWEEP_LR_CONFIGS := --configs base,qknorm,all
SWEEP_LR_POINTS := --key lr --values 3e-4,1e-3,2e-3,4e-3,8e-3,1.6e-2,3.2e-2 $(SWEEP_LR_CONFIGS)
SWEEP_LR := $(SWEEP_LR_POINTS) --seeds 2
SWEEP_LR_EDGE := --key lr --values 1.6e-2 $(SWEEP_LR_CONFIGS) --seeds 4
JOBS ?= 1
sweep-lr: lab
	$(LAB_BIN) sweep $(SWEEP_LR) --preset quick --out $(abspath $(RUNS))/sweep_lr --jobs $(JOBS) --log
	$(LAB_BIN) sweep $(SWEEP_LR) --out $(abspath $(RUNS))/sweep_lr --table

sweep-lr-edge: lab
	$(LAB_BIN) sweep $(SWEEP_LR_EDGE) --preset quick --out $(abspath $(RUNS))/sweep_lr --jobs $(JOBS) --log
	$(LAB_BIN) sweep $(SWEEP_LR_EDGE) --out $(abspath $(RUNS))/sweep_lr --table

# every seed the folder holds: 2 a point, 4 at the edge (sweep_plots.sh leaves out the rest)
sweep-figures: lab
	LAB=$(LAB_BIN) sh $(ROOT)/scripts/sweep_plots.sh $(ROOT)/results/sweep_lr $(BUILD)/sweep-figures -- \
	    $(SWEEP_LR_POINTS) --seeds 4
	cp $(BUILD)/sweep-figures/val_mse.png $(ROOT)/docs/figures/beyond_lr_val_mse.png
	cp $(BUILD)/sweep-figures/stability.png $(ROOT)/docs/figures/beyond_lr_stability.png

# SwiGLU against the budget (docs/beyond.md section 2): the same sweep
# machinery with one value of `steps`; --curves compares the val MSE along
# the runs check by check.
SWEEP_BUDGET := --key steps --values 16000 --configs base,swiglu --seeds 2 --set val_every=500
budget-swiglu: lab
	$(LAB_BIN) sweep $(SWEEP_BUDGET) --preset quick --out $(abspath $(RUNS))/budget_swiglu --jobs $(JOBS) --log
	$(LAB_BIN) sweep $(SWEEP_BUDGET) --out $(abspath $(RUNS))/budget_swiglu --curves

budget-figures: lab
	@if [ -d $(ROOT)/results/budget_swiglu ]; then \
	    LAB=$(LAB_BIN) sh $(ROOT)/scripts/gap_plot.sh $(ROOT)/results/budget_swiglu \
	        $(ROOT)/docs/figures/beyond_budget_gap.png -- $(SWEEP_BUDGET); \
	else echo "make budget-figures: no results/budget_swiglu yet (make budget-swiglu, then commit its runs)"; fi
