# RUNNER=slurm: the runs left as a Slurm job array, the rest as a job after it (docs/step6_ablation.md#on-a-cluster)
.PHONY: slurm-check cluster-deps
$(if $(filter-out slurm,$(RUNNER)),$(error RUNNER=$(RUNNER): the runner is slurm, or none to run here))
SLURM_THREADS ?= 2
# a run's peak resident memory, measured: smoke 0.47 GB, quick 1.06 GB, tutorial 1.25 GB
SLURM_MEM ?= 2G
SLURM_GRACE ?= 300
SLURM_SBATCH = $(addprefix --partition=,$(SLURM_PARTITION)) $(addprefix --account=,$(SLURM_ACCOUNT)) \
               $(addprefix --time=,$(SLURM_TIME)) $(SLURM_OPTS)
slurm_submit = TINYDIT_SBATCH_OPTS='$(SLURM_SBATCH)' TINYDIT_SLURM_GRACE='$(SLURM_GRACE)' sh scripts/slurm.sh $(1) \
    $(RUNS) '$(SLURM_THREADS)' '$(SLURM_MEM)' '$(MAKE) $(1) RUNNER= ESTIMATE=no PRESET=$(PRESET) SEEDS=$(SEEDS) RUNS=$(RUNS)'
SLURM_PRINT = --print-commands --left --log --threads $(SLURM_THREADS)
ifeq ($(RUNNER),slurm)
tutorial: all $(if $(CIFAR_DIR),,data)
	$(call slurm_submit,tutorial) $(LAB) ablation $(PLAN_OPTS) $(SLURM_PRINT)
ablation: lab
	$(call slurm_submit,ablation) $(LAB) ablation --preset $(PRESET) --out $(RUNS) --seeds $(SEEDS) $(SLURM_PRINT)
sweep-lr: lab
	$(call slurm_submit,sweep-lr) $(LAB) sweep $(SWEEP_LR) --preset quick --out $(RUNS)/sweep_lr $(SLURM_PRINT)
sweep-lr-edge: lab
	$(call slurm_submit,sweep-lr-edge) $(LAB) sweep $(SWEEP_LR_EDGE) --preset quick --out $(RUNS)/sweep_lr $(SLURM_PRINT)
budget-swiglu: lab
	$(call slurm_submit,budget-swiglu) $(LAB) sweep $(SWEEP_BUDGET) --preset quick --out $(RUNS)/budget_swiglu $(SLURM_PRINT)
guidance-sweeps: step7
	$(call slurm_submit,guidance-sweeps) sh scripts/slurm.sh --guidance-commands $(RUNS) $(GUIDANCE_W)
endif
# the smoke preset's job through a one-node cluster on this machine, against the same runs here
slurm-check: all
	sh scripts/slurm_check.sh
cluster-deps: PACKAGES = slurm-wlm munge
