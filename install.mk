# install.mk (included from the Makefile): the man pages and `make install`.
#
# Man pages are written in scdoc (Debian's scdoc), each beside its program in a
# man/ folder (aggregator/master/man/, executor/man/, ...), NAME.SECTION.scd.
# `make` builds them into $(BUILD)/man/NAME.SECTION, each rebuilt only when its
# source changes; `make check` lints every one (tests/scripts/man-lint.t) and
# checks that they name every command, option and key the programs take
# (tests/scripts/man-coverage.t).
#
# make install [PREFIX=/usr/local] [DESTDIR=]: a tree for the CI master or a
# build host (tests/scripts/install.t checks it):
#   BINDIR      PREFIX/bin                 bootci-aggregator, bootci-builder, bootci-results
#   IMAGEBINDIR PREFIX/lib/bootci          what the images carry, for the recipes to pack:
#                                          bootci-executor, bootci-efi and bootci-collect
#                                          (static musl), fixtures/ (the lab's test
#                                          programs)
#   DATADIR     PREFIX/share/bootci        images/ (the recipes) and initramfs/ (the test
#                                          image's spec, executor.conf, testlists/), side by
#                                          side as in the tree, so the recipes' relative
#                                          paths hold
#   MANDIR      PREFIX/share/man           man1/, man5/, man8/
#   UNITDIR     PREFIX/lib/systemd/system  bootci-serve.service (ExecStart: BINDIR's)
#   SYSUSERSDIR PREFIX/lib/sysusers.d      bootci.conf (the service's user)
# Programs in lib/bootci/ rather than libexec/: they are not run on this
# machine at all, they are files the images are made of.

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

# ---- make install ----
PREFIX      ?= /usr/local
DESTDIR     ?=
BINDIR      ?= $(PREFIX)/bin
IMAGEBINDIR ?= $(PREFIX)/lib/bootci
DATADIR     ?= $(PREFIX)/share/bootci
MANDIR      ?= $(PREFIX)/share/man
UNITDIR     ?= $(PREFIX)/lib/systemd/system
SYSUSERSDIR ?= $(PREFIX)/lib/sysusers.d

INSTALL_BINS       := $(MASTER_BIN) $(BUILD)/host/bin/bootci-builder $(RESULTS_BIN)
INSTALL_IMAGE_BINS := $(EXECUTOR_BIN) $(BOOTCI_EFI_BIN) $(COLLECT_BIN)
# The recipes and what they name by relative path; images/test-igt.conf is the
# lab's (it packs tests/lab/igt-runner-vm.sh) and stays in the tree.
INSTALL_RECIPES    := images/test-image.conf images/known-good.conf images/known-good.spec \
	images/known-good-executor.conf images/known-good-collect.conf \
	images/known-good-collect.sh images/known-good-udhcpc.script
INSTALL_INITRAMFS  := initramfs/test.spec initramfs/executor.conf
SERVE_UNIT         := aggregator/master/bootci-serve.service
SERVE_SYSUSERS     := aggregator/master/bootci.sysusers.conf

.PHONY: install
install: $(INSTALL_BINS) $(INSTALL_IMAGE_BINS) $(FIXTURES_MUSL) $(MAN_PAGES)
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(IMAGEBINDIR)/fixtures \
		$(DESTDIR)$(DATADIR)/images $(DESTDIR)$(DATADIR)/initramfs/testlists \
		$(addprefix $(DESTDIR)$(MANDIR)/man,1 5 8) $(DESTDIR)$(UNITDIR) $(DESTDIR)$(SYSUSERSDIR)
	install -m 0755 $(INSTALL_BINS) $(DESTDIR)$(BINDIR)/
	install -m 0755 $(INSTALL_IMAGE_BINS) $(DESTDIR)$(IMAGEBINDIR)/
	install -m 0755 $(FIXTURES_MUSL) $(DESTDIR)$(IMAGEBINDIR)/fixtures/
	install -m 0644 $(INSTALL_RECIPES) $(DESTDIR)$(DATADIR)/images/
	chmod 0755 $(DESTDIR)$(DATADIR)/images/known-good-collect.sh \
		$(DESTDIR)$(DATADIR)/images/known-good-udhcpc.script
	install -m 0644 $(INSTALL_INITRAMFS) $(DESTDIR)$(DATADIR)/initramfs/
	install -m 0644 $(wildcard initramfs/testlists/*.txt) $(DESTDIR)$(DATADIR)/initramfs/testlists/
	$(foreach s,1 5 8,install -m 0644 $(filter %.$(s),$(MAN_PAGES)) $(DESTDIR)$(MANDIR)/man$(s)/ &&) true
	sed 's|/usr/local/bin/|$(BINDIR)/|' $(SERVE_UNIT) >$(DESTDIR)$(UNITDIR)/bootci-serve.service
	chmod 0644 $(DESTDIR)$(UNITDIR)/bootci-serve.service
	install -m 0644 $(SERVE_SYSUSERS) $(DESTDIR)$(SYSUSERSDIR)/bootci.conf
