# builder/: bootci-builder, the host tool making reproducible initramfs images
# (libbuilder.a holds everything but main.c, so unit tests and fuzzers link it).
BUILDER_SRCS := $(filter-out builder/main.c,$(call srcs,builder))

$(eval $(call archive,host,builder,$(BUILDER_SRCS)))
$(eval $(call archive,asan,builder,$(BUILDER_SRCS)))
$(eval $(call archive,fuzz,builder,$(BUILDER_SRCS)))

TEST_ARCHIVES += builder

$(BUILD)/host/bin/bootci-builder: $(call objs,host,builder/main.c) $(BUILD)/host/libbuilder.a $(BUILD)/host/libbootci.a
	@mkdir -p $(@D)
	$(HOST_CC) $(HOST_CFLAGS) -o $@ $(filter %.o %.a,$^) $(HOST_LIBS)

all: $(BUILD)/host/bin/bootci-builder
