# initramfs/ and images/: the two images, made by bootci-builder from the
# recipes in images/ (see builder/recipe.h for the syntax).
#
#   $(BUILD)/images/test/        vmlinuz, initrd.img, boot.ipxe, bootci.efi (UKI)
#   $(BUILD)/images/known-good/  disk.img (GPT: ESP + BOOTCI-RESULTS), known-good.efi,
#                                layout, register-boot-entry.sh
#   $(BUILD)/images/*.manifest   every file with sha256, size, mode, origin
#   $(BUILD)/initramfs/initrd.img  the test image's initramfs (the lab and make demo boot it)
#
# The module lists live in the recipes; executor.conf names what the executor
# loads at boot.

BOOTCI_BUILDER      := $(BUILD)/host/bin/bootci-builder
EXECUTOR_MUSL       := $(BUILD)/musl/bin/bootci-executor
INITRAMFS_DIR       := $(BUILD)/initramfs
INITRAMFS_IMAGE     := $(INITRAMFS_DIR)/initrd.img
INITRAMFS_BUSYBOX   := /bin/busybox
IMAGES_DIR          := $(BUILD)/images

# What the recipes' ${VAR}s name.
IMAGE_ENV := EXECUTOR=$(abspath $(EXECUTOR_MUSL)) BUSYBOX=$(INITRAMFS_BUSYBOX) \
	EXECUTOR_CONF=$(CURDIR)/initramfs/executor.conf \
	KNOWN_GOOD_CONF=$(CURDIR)/images/known-good-executor.conf \
	FIXTURES=$(abspath $(BUILD)/musl/bin/fixtures) \
	BOOTCI_EFI=$(abspath $(BUILD)/musl/bin/bootci-efi) \
	COLLECT=$(abspath $(COLLECT_BIN))
IMAGE_KERNEL = --vmlinuz $(BUILD)/kernel/vmlinuz --modules $(BUILD)/kernel/root

# The manifest is written last, after the image folder is in place: it stands for both.
$(IMAGES_DIR)/test.manifest: images/test-image.conf initramfs/test.spec initramfs/executor.conf \
		$(wildcard initramfs/testlists/*.txt) initramfs/build.mk $(KERNEL_STAMP) $(EXECUTOR_MUSL) $(BOOTCI_BUILDER) $(FIXTURES_MUSL)
	@mkdir -p $(@D)
	$(IMAGE_ENV) $(BOOTCI_BUILDER) test-image --recipe images/test-image.conf $(IMAGE_KERNEL) \
		--manifest $@ --out $(IMAGES_DIR)/test

$(IMAGES_DIR)/known-good.manifest: images/known-good.conf images/known-good.spec \
		images/known-good-executor.conf images/known-good-collect.sh images/known-good-collect.conf \
		images/known-good-udhcpc.script initramfs/build.mk $(KERNEL_STAMP) $(EXECUTOR_MUSL) \
		$(BOOTCI_BUILDER) $(COLLECT_BIN)
	@mkdir -p $(@D)
	$(IMAGE_ENV) $(BOOTCI_BUILDER) known-good --recipe images/known-good.conf $(IMAGE_KERNEL) \
		--manifest $@ --out $(IMAGES_DIR)/known-good

$(INITRAMFS_IMAGE): $(IMAGES_DIR)/test.manifest
	@mkdir -p $(@D)
	cp $(IMAGES_DIR)/test/initrd.img $@.tmp
	@mv $@.tmp $@

.PHONY: initramfs images
initramfs: $(INITRAMFS_IMAGE)
images: $(IMAGES_DIR)/test.manifest $(IMAGES_DIR)/known-good.manifest
all: $(INITRAMFS_IMAGE) images
