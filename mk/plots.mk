# mk/plots.mk: the runs into RUNS (the tutorial's, the ablation's, the sweeps'), their figures, the docs' figures.
.PHONY: tutorial ablation plots runs-plots report results results-pytorch docs-figures \
        guidance-sweeps model-figures sweep-lr sweep-lr-edge sweep-figures budget-swiglu budget-figures
PRESET ?= quick
SEEDS ?= 1
# JOBS: runs side by side; unset, make tutorial takes what lab estimate finds faster here and now (1, or 2), else 1
JOBS ?=
ESTIMATE ?= yes
S6 := step6_ablation/step6_ablation
LAB := lab/lab
# make tutorial: steps 1 to 7 at PRESET, estimated first (ESTIMATE=no skips it), step 6's baseline pair first for step 1
JOB_PROGRAMS := $(filter-out step0_tour/% step8_recipe/%,$(PROGRAMS))
PLAN_OPTS = --preset $(PRESET) --seeds $(SEEDS) --out $(RUNS)
TUTORIAL_JOBS = $(or $(JOBS),$(if $(filter yes,$(ESTIMATE)),$$(sed -n 's/^jobs //p' $(RUNS)/estimate.txt),1))
ABLATION_OPTS = $(PLAN_OPTS) --jobs $(TUTORIAL_JOBS) --log $(if $(filter yes,$(ESTIMATE)),--estimate $(RUNS)/estimate.txt)
# make -j2 ablation: -jN becomes --jobs N (in MAKEFLAGS only while recipes run: "=")
ABL_JOBS = $(or $(patsubst -j%,%,$(filter -j%,$(MAKEFLAGS))),1)
# make guidance-sweeps: each class-conditional run (c10_*) scored at each w into RUN/guidance.tsv
GUIDANCE_W ?= 0,1,2,3,4,5,6
# docs/beyond.md's lr sweep (sweep-lr-edge: 2 more seeds at its edge) and SwiGLU against the budget
SWEEP_LR_POINTS := --key lr --values 3e-4,1e-3,2e-3,4e-3,8e-3,1.6e-2,3.2e-2 --configs base,qknorm,all
SWEEP_LR := $(SWEEP_LR_POINTS) --seeds 2
SWEEP_LR_EDGE := --key lr --values 1.6e-2 --configs base,qknorm,all --seeds 4
SWEEP_BUDGET := --key steps --values 16000 --configs base,swiglu --seeds 2 --set val_every=500
sweep = $(LAB) sweep $(1) --preset quick --out $(RUNS)/$(2) --jobs $(or $(JOBS),1) --log && $(LAB) sweep $(1) --out $(RUNS)/$(2) $(3)
ifneq ($(RUNNER),slurm)   # else mk/slurm.mk's
tutorial: $(if $(CIFAR_DIR),,data)
	+@echo "make tutorial: its programs, $$(nproc) compilers at a time"; $(MAKE) -s -j$$(nproc) $(JOB_PROGRAMS)
	@mkdir -p $(RUNS)
	$(if $(filter yes,$(ESTIMATE)),$(LAB) estimate $(PLAN_OPTS) $(if $(JOBS),--jobs $(JOBS),--choose-jobs) --save $(RUNS)/estimate.txt)
	$(LAB) ablation $(ABLATION_OPTS) --only p11_base_s0,p11_base_s1
	cd step1_scorecard && ./step1_scorecard --preset $(PRESET) --out $(RUNS) --figures $(RUNS)/figures
	sh scripts/step_figures.sh $(RUNS)/figures - $(RUNS)
	$(LAB) ablation $(ABLATION_OPTS)
	$(S6) table $(RUNS)
	$(MAKE) --no-print-directory runs-plots
	@$(if $(filter yes,$(ESTIMATE)),$(LAB) estimate --since $(RUNS)/estimate.txt)
	@echo "done: $(RUNS)/report.md, $(RUNS)/plots/ and $(RUNS)/figures/"
ablation: lab
	$(LAB) ablation --preset $(PRESET) --out $(RUNS) --jobs $(ABL_JOBS) --log --seeds $(SEEDS)
	$(S6) table $(RUNS)
guidance-sweeps: step7
	@for c in $(RUNS)/c10_*/ckpt.safetensors; do [ -e "$$c" ] || continue; d=$${c%/*}; \
	    [ -e $$d/guidance.tsv ] && continue; echo "step7_guidance sweep --model $$c --w $(GUIDANCE_W) --out $$d/guidance.tsv"; \
	    step7_guidance/step7_guidance sweep --model $$c --w $(GUIDANCE_W) --out $$d/guidance.tsv || exit 1; done
sweep-lr: lab
	$(call sweep,$(SWEEP_LR),sweep_lr,--table)
sweep-lr-edge: lab
	$(call sweep,$(SWEEP_LR_EDGE),sweep_lr,--table)
budget-swiglu: lab
	$(call sweep,$(SWEEP_BUDGET),budget_swiglu,--curves)
endif
plots: runs-plots
	sh scripts/step_figures.sh $(RUNS)/figures $(RUNS) $(RUNS)
runs-plots: $(JOB_PROGRAMS)
	sh scripts/plots.sh $(RUNS) $(RUNS)/plots
	$(S6) attention-maps --runs $(RUNS) || \
	    echo "plots: no attention maps: they need the finished runs p11_base_s0 and p11_rope"
	$(LAB) report $(RUNS)
report: lab
	$(LAB) report $(RUNS)
# make results PRESET=quick RUNS=dir: RUNS without checkpoints, with its table, report, plots and README
results: step1 step6 lab
	@test -n "$(PRESET)" || { echo "make results PRESET=quick RUNS=dir"; exit 2; }
	sh scripts/results.sh $(PRESET) $(RUNS)
results-pytorch: step6
	sh scripts/results_torch.sh $(PRESET) $(RUNS)
# The docs' figures: from RESULTS, step 7's curves from COND_RESULTS, attention maps from RUNS' checkpoints
RESULTS ?= results/quick
COND_RESULTS ?= results/c10_quick
DOCS_FIG := $(CURDIR)/$(BUILD)/docs-figures
docs-figures: $(STEP_TARGETS) lab model-figures sweep-figures
	rm -rf $(DOCS_FIG) && mkdir -p $(DOCS_FIG) docs/figures
	sh scripts/step_figures.sh $(DOCS_FIG) $(abspath $(RESULTS)) $(abspath $(COND_RESULTS))
	cd step8_recipe && ./step8_recipe --figures $(DOCS_FIG) > /dev/null
	step8_recipe/step8_recipe curves results/recipe_quick/*/nfe.tsv --figures $(DOCS_FIG)
	$(S6) attention-maps --runs $(RUNS) --out $(DOCS_FIG) || echo "docs-figures: no attention maps: they need" \
	    "$(RUNS)/p11_base_s0 and p11_rope with their checkpoints; docs/figures keeps its step6_attention_*.png"
	STEP6=$(S6) sh scripts/plots.sh $(RESULTS) $(DOCS_FIG)/plots
	for p in val_mse_seeds loss lr2e3; do [ ! -f $(DOCS_FIG)/plots/$$p.png ] || cp $(DOCS_FIG)/plots/$$p.png $(DOCS_FIG)/step6_$$p.png; done
	cp $(DOCS_FIG)/step[1-8]_*.png docs/figures/
	@ls -l docs/figures/
# the model page's: the block diagram, and step0_tour's three (the flow path needs CIFAR-10's test set)
model-figures: step0
	rm -rf $(BUILD)/model-figures && mkdir -p $(BUILD)/model-figures
	dot -Tpng -Gdpi=90 docs/figures/tinydit_block.dot -o docs/figures/tinydit_block.png
	step0_tour/step0_tour --figures $(BUILD)/model-figures
	cp $(BUILD)/model-figures/tinydit_*.png docs/figures/
# every seed the folder holds: 2 a point, 4 at the edge (sweep_plots.sh leaves out the rest)
sweep-figures: lab
	LAB=$(LAB) sh scripts/sweep_plots.sh results/sweep_lr $(BUILD)/sweep-figures -- $(SWEEP_LR_POINTS) --seeds 4
	for f in val_mse stability; do cp $(BUILD)/sweep-figures/$$f.png docs/figures/beyond_lr_$$f.png; done
budget-figures: lab
	@if [ -d results/budget_swiglu ]; then \
	    LAB=$(LAB) sh scripts/gap_plot.sh results/budget_swiglu docs/figures/beyond_budget_gap.png -- $(SWEEP_BUDGET); \
	else echo "make budget-figures: no results/budget_swiglu yet (make budget-swiglu, then commit its runs)"; fi
