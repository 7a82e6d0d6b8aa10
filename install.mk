# install.mk (included from the Makefile): the man pages.
#
# Man pages are written in scdoc (Debian's scdoc), each beside its program in a
# man/ folder (aggregator/master/man/, executor/man/, ...), NAME.SECTION.scd.
# `make` builds them into $(BUILD)/man/NAME.SECTION, each rebuilt only when its
# source changes; `make check` lints every one (tests/scripts/man-lint.t) and
# checks that they name every command, option and key the programs take
# (tests/scripts/man-coverage.t).

# ---- man pages ----
MAN_SRCS  := $(sort $(shell find aggregator executor builder -path '*/man/*.scd'))
MAN_PAGES := $(patsubst %.scd,$(BUILD)/man/%,$(notdir $(MAN_SRCS)))
MAN_CLEAN := builder/setup/scdoc-clean.awk
vpath %.scd $(sort $(dir $(MAN_SRCS)))

# scdoc dates the page from SOURCE_DATE_EPOCH (the Makefile exports the last commit's).
$(BUILD)/man/%: %.scd $(MAN_CLEAN) | $(HOST_DEPS_STAMP)
	@mkdir -p $(@D)
	set -o pipefail; scdoc <$< | awk -f $(MAN_CLEAN) >$@.tmp
	@mv $@.tmp $@

.PHONY: man
man: $(MAN_PAGES)
all: $(MAN_PAGES)
