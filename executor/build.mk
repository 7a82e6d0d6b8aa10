# executor/: bootci-executor, PID 1 of the test initramfs: static musl for the
# image, and the same sources (less main.c) as libexecutor.a for host tests.
EXECUTOR_SRCS := $(filter-out executor/main.c executor/efi-tool/main.c,$(call srcs,executor))
EXECUTOR_BIN  := $(BUILD)/musl/bin/bootci-executor
TEST_ARCHIVES += executor
# environment.c reads /proc/config.gz through zlib (MUSL_LIBS has it already).
HOST_LIBS     += -lz

$(eval $(call archive,musl,executor,$(EXECUTOR_SRCS)))
$(eval $(call archive,host,executor,$(EXECUTOR_SRCS)))
$(eval $(call archive,asan,executor,$(EXECUTOR_SRCS)))
$(eval $(call archive,fuzz,executor,$(EXECUTOR_SRCS)))

$(EXECUTOR_BIN): $(call objs,musl,executor/main.c) $(BUILD)/musl/libexecutor.a $(BUILD)/musl/libbootci.a
	@mkdir -p $(@D)
	$(MUSL_CC) $(MUSL_LDFLAGS) -o $@ $^ $(MUSL_LIBS)
	@tests/check-static.sh $@

# The host build of the executor (--root runs on a fake tree, unit tests).
$(BUILD)/host/bin/bootci-executor: $(call objs,host,executor/main.c) $(BUILD)/host/libexecutor.a $(BUILD)/host/libbootci.a
	@mkdir -p $(@D)
	$(HOST_CC) $(HOST_CFLAGS) -o $@ $^ $(HOST_LIBS)

all: $(EXECUTOR_BIN) $(BUILD)/host/bin/bootci-executor

# bootci-efi: the EFI boot entries by hand or from a provisioning boot; static
# musl for the test image (/usr/sbin/bootci-efi, images/test-image.conf), host
# build for tests on fake trees (--root).
BOOTCI_EFI_BIN := $(BUILD)/musl/bin/bootci-efi

# A thin command line over lib/efi: it needs none of the executor's modules.
$(BOOTCI_EFI_BIN): $(call objs,musl,executor/efi-tool/main.c) $(BUILD)/musl/libbootci.a
	@mkdir -p $(@D)
	$(MUSL_CC) $(MUSL_LDFLAGS) -o $@ $^ -lblkid
	@tests/check-static.sh $@

$(BUILD)/host/bin/bootci-efi: $(call objs,host,executor/efi-tool/main.c) $(BUILD)/host/libbootci.a
	@mkdir -p $(@D)
	$(HOST_CC) $(HOST_CFLAGS) -o $@ $^ -lblkid

# The test image carries it (images/test-image.conf names it beside the fixtures).
$(BUILD)/images/test.manifest: $(BOOTCI_EFI_BIN)

all: $(BOOTCI_EFI_BIN) $(BUILD)/host/bin/bootci-efi
