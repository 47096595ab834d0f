# bench/figures/figures.mk: the paper's figures (bench/figures/README.md).
#
#   make figures                      every figure at the reduced scale
#                                     (<= 20 min on the 2-core machines)
#   make figures FIGURE_SCALE=full    the specs' full scale (hours under TCG)
#   make figures FIGURES_OUT=DIR      results folder (default
#                                     results/figures-<scale>-<UTC time>);
#                                     completed points there are kept, so
#                                     the same DIR resumes an interrupted run
#   make figures FIGURE_SETS="k=v ..." extra spec overrides for every point
#   make figures-plot [FIGURES_OUT=DIR] rebuild CSVs and PNGs from DIR only
#                                     (default: the newest results/figures-*)
#
# Prints figures=<n>, the path of every PNG and a closing note (hit fraction
# vs 1/WSS, thread-scaling ratios).  Test: test-figures (TESTS).

FIGURES_DIR  := $(TOP)/bench/figures
FIGURE_SCALE ?= reduced
FIGURES_OUT  ?= $(TOP)/results/figures-$(FIGURE_SCALE)-$(shell date -u +%Y%m%dT%H%M%SZ)
FIGURE_SETS  ?=

.PHONY: figures figures-plot figures-deps
figures: figures-deps qemu guest-image mio
	@$(FIGURES_DIR)/make-figures --scale $(FIGURE_SCALE) --out $(FIGURES_OUT) \
	    $(foreach s,$(FIGURE_SETS),--set $(s))

FIGURES_LAST = $(if $(filter command line environment,$(origin FIGURES_OUT)),$(FIGURES_OUT),\
                 $(shell ls -td $(TOP)/results/figures-* 2>/dev/null | head -n1))
figures-plot: figures-deps
	@test -n "$(strip $(FIGURES_LAST))" || { echo "figures-plot: no results/figures-*; set FIGURES_OUT" >&2; exit 1; }
	@$(FIGURES_DIR)/make-figures --plot-only --out $(strip $(FIGURES_LAST))

figures-deps:
	@$(FIGURES_DIR)/deps.sh

TESTS += $(FIGURES_DIR)/test-figures
TEST_DEPS += figures-deps qemu guest-image mio
