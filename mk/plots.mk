# mk/plots.mk: the ablation from the project's root: its runs, its figures
# and its report. Included by the root Makefile.
#
#   make -j2 ablation [PRESET=quick] [RUNS=runs]   the nine runs, two at a time
#                                                  (step6_ablation/Makefile)
#   make plots [RUNS=runs]    gnuplot figures into RUNS/plots (scripts/plots.sh),
#                             then RUNS/report.md
#   make report [RUNS=runs]   RUNS/report.md alone
RUNS ?= $(ROOT)/runs
STEP6_BIN = $(ROOT)/step6_ablation/step6_ablation

.PHONY: plots report ablation
plots: step6
	sh $(ROOT)/scripts/plots.sh $(RUNS) $(RUNS)/plots
	$(STEP6_BIN) report $(RUNS)

report: step6
	$(STEP6_BIN) report $(RUNS)

ablation: step6
	$(MAKE) --no-print-directory -C $(ROOT)/step6_ablation ablation RUNS=$(abspath $(RUNS))
