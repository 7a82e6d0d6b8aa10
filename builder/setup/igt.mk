# Real IGT (included from the Makefile). When ../shared/igt/ holds IGT's source
# tarball (or IGT_TARBALL names one), `make` builds it under $(BUILD)/igt/
# (builder/setup/igt.sh: packages, src/, build/, a stamp) and the IGT test image
# $(BUILD)/images/test-igt/ (images/test-igt.conf, testlist IGT_TESTLIST).
# Without it nothing here is built, and the scenarios and bench that need IGT
# skip, saying so.
#
#   $(BUILD)/igt/build/tests/      the driver-generic test binaries (builder/setup/igt-binaries)
#   $(BUILD)/igt/build/runner/     igt_runner, igt_results (the references)
#   $(BUILD)/images/test-igt/      vmlinuz, initrd.img, boot.ipxe, bootci.efi with IGT

IGT_TARBALL  ?= $(lastword $(sort $(wildcard ../shared/igt/igt-gpu-tools-*.tar.xz)))
IGT_DIR      := $(BUILD)/igt
IGT_STAMP    := $(IGT_DIR)/stamp
IGT_BUILD    := $(IGT_DIR)/build
IGT_TESTLIST ?= initramfs/testlists/igt-generic.txt

.PHONY: igt igt-image

ifneq ($(IGT_TARBALL),)
# IGT's packages after the host's (both install with apt-get, which takes one lock),
# and before the other set-up steps that read apt's package lists (the sysroot's
# apt-get source, the kernel's apt-get download): igt-deps.sh's apt-get update
# rewrites them. Under make -j these would otherwise run at once.
IGT_DEPS_STAMP := $(BUILD)/stamps/igt-deps
$(IGT_DEPS_STAMP): builder/setup/igt-deps.sh | $(HOST_DEPS_STAMP)
	@builder/setup/igt-deps.sh
	@mkdir -p $(@D) && touch $@
$(SYSROOT_STAMP) $(KERNEL_STAMP): | $(IGT_DEPS_STAMP)

# IGT's build after the sysroot's: the sysroot is on the way to every image (the executor is
# built with it), and under make -j IGT's ninja would take its cores.
$(IGT_STAMP): $(IGT_TARBALL) builder/setup/igt.sh builder/setup/igt-deps.sh builder/setup/igt-binaries \
		| $(IGT_DEPS_STAMP) $(SYSROOT_STAMP)
	@builder/setup/igt.sh $(IGT_TARBALL) $(IGT_DIR)
	@touch $@

$(IMAGES_DIR)/test-igt.manifest: images/test-igt.conf initramfs/test.spec initramfs/executor-igt.conf \
		tests/lab/igt-runner-vm.sh $(IGT_TESTLIST) $(wildcard initramfs/testlists/*.txt) \
		builder/setup/igt.mk $(IGT_STAMP) $(KERNEL_STAMP) $(EXECUTOR_MUSL) $(BOOTCI_EFI_BIN) $(BOOTCI_BUILDER) \
		$(FIXTURES_MUSL)
	@mkdir -p $(@D)
	@# An absolute --igt: the ELF closure joins $$ORIGIN RUNPATHs to the source path, and
	@# normalizes only absolute ones (a relative one overruns its buffer: reported).
	$(IMAGE_ENV) EXECUTOR_CONF=$(CURDIR)/initramfs/executor-igt.conf IGT_BUILD=$(abspath $(IGT_BUILD)) \
		$(BOOTCI_BUILDER) test-image --recipe images/test-igt.conf $(IMAGE_KERNEL) \
		--igt $(abspath $(IGT_BUILD)) --testlist $(IGT_TESTLIST) --manifest $@ --out $(IMAGES_DIR)/test-igt

igt: $(IGT_STAMP)
igt-image: $(IMAGES_DIR)/test-igt.manifest
all: igt-image
else
igt:
	@echo "igt: no IGT source tarball in ../shared/igt/ (set IGT_TARBALL=FILE): not built"
igt-image: igt
endif
