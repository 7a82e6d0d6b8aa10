# initramfs/: the test image's initramfs, $(BUILD)/initramfs/initrd.img.
#
# test.spec (hand-written) + modules.spec (the staged module closure) +
# fixtures.spec (one line per fixture program) -> bootci-builder initramfs.

# Modules staged into the image with their dependencies and soft dependencies.
# crc32c_generic is named explicitly: ext4 with metadata_csum (mkfs.ext4's
# default) needs a crc32c driver, and the lab's qemu64 CPU has no SSE4.2 for
# crc32c-intel, which the crc32c alias would otherwise try first.
INITRAMFS_MODULES := virtio_pci virtio_blk crc32c_generic ext4 efivarfs i6300esb

INITRAMFS_DIR       := $(BUILD)/initramfs
INITRAMFS_IMAGE     := $(INITRAMFS_DIR)/initrd.img
INITRAMFS_STAGING   := $(INITRAMFS_DIR)/modules
INITRAMFS_COMPRESS  := zstd
INITRAMFS_BUSYBOX   := /bin/busybox
BOOTCI_BUILDER      := $(BUILD)/host/bin/bootci-builder
EXECUTOR_MUSL       := $(BUILD)/musl/bin/bootci-executor

# The staged modules: $(INITRAMFS_STAGING)/lib/modules/<release>, depmod run on it.
$(INITRAMFS_DIR)/modules.spec: initramfs/build.mk $(KERNEL_STAMP) $(BOOTCI_BUILDER)
	@rm -rf $(INITRAMFS_STAGING)
	@mkdir -p $(@D)
	$(BOOTCI_BUILDER) modules --moddir $(BUILD)/kernel/root \
		--kver $$(cat $(KERNEL_STAMP)) --out $(INITRAMFS_STAGING) $(INITRAMFS_MODULES)
	$(BOOTCI_BUILDER) spec-from-dir $(INITRAMFS_STAGING)/lib/modules /lib/modules $@.tmp
	@mv $@.tmp $@

# Written by the recipe itself: the fixture list comes from tests/fixtures/*.c.
$(INITRAMFS_IMAGE): initramfs/test.spec initramfs/executor.conf initramfs/build.mk \
		$(INITRAMFS_DIR)/modules.spec $(EXECUTOR_MUSL) $(BOOTCI_BUILDER) $(FIXTURES_MUSL)
	@mkdir -p $(@D)
	@printf '%s\n' $(foreach f,$(FIXTURES_MUSL), \
		'file /usr/libexec/bootci/fixtures/$(notdir $(f)) $(abspath $(f)) 0755 0 0') \
		>$(INITRAMFS_DIR)/fixtures.spec
	EXECUTOR=$(abspath $(EXECUTOR_MUSL)) BUSYBOX=$(INITRAMFS_BUSYBOX) \
	EXECUTOR_CONF=$(CURDIR)/initramfs/executor.conf \
		$(BOOTCI_BUILDER) initramfs --compress $(INITRAMFS_COMPRESS) initramfs/test.spec \
		$(INITRAMFS_DIR)/modules.spec $(INITRAMFS_DIR)/fixtures.spec $@.tmp
	@mv $@.tmp $@

.PHONY: initramfs
initramfs: $(INITRAMFS_IMAGE)
all: $(INITRAMFS_IMAGE)
