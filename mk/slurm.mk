# RUNNER=slurm: make tutorial, ablation, sweep-lr, sweep-lr-edge,
# budget-swiglu and guidance-sweeps submit the runs they have left as one
# Slurm job array, a task a run, and the rest of the target (table, report,
# plots: the target again, without RUNNER) as a job that waits for it
# (scripts/slurm.sh; docs/step6_ablation.md#on-a-cluster). Each task gets
# SLURM_THREADS cores and SLURM_MEM memory; SLURM_PARTITION, SLURM_ACCOUNT,
# SLURM_TIME (a task's time limit) and SLURM_OPTS (any other sbatch options)
# go to sbatch; SLURM_GRACE seconds before its time limit a task asks to be
# requeued. make slurm-check tests all of it on a cluster of one node.
.PHONY: slurm-check cluster-deps
$(if $(filter-out slurm,$(RUNNER)),$(error RUNNER=$(RUNNER): the runner is slurm, or none to run here))
SLURM_THREADS ?= 2
# a run's peak resident memory, measured: smoke 0.47 GB, quick 1.06 GB, tutorial 1.25 GB
SLURM_MEM ?= 2G
SLURM_GRACE ?= 300
SLURM_SBATCH = $(addprefix --partition=,$(SLURM_PARTITION)) $(addprefix --account=,$(SLURM_ACCOUNT)) \
               $(addprefix --time=,$(SLURM_TIME)) $(SLURM_OPTS)
# $(1): the target; the rest: the command that prints its runs' commands
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
# a one-node cluster on this machine, the smoke preset's job through it,
# against the same runs trained here (scripts/slurm_check.sh)
slurm-check: all
	sh scripts/slurm_check.sh
cluster-deps: PACKAGES = slurm-wlm munge
