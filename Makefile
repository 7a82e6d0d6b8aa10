# bootci — top-level build. `make` builds everything (man pages included), `make
# check` runs every test, `make demo` builds and runs one full cycle in the QEMU
# lab, `make install` installs the programs, recipes, man pages and serve's unit
# (install.mk). Everything built lands under build/; set-up steps are stamped so
# a second `make` is a no-op.

BUILD := build
SHELL := /bin/bash
# One job per core unless the command line says otherwise (`make -j1`): the
# compiles of five flavors (musl, host, ASan, fuzz, IGT's) are most of a fresh build.
# Not with a clean asked for (`make clean all`): the clean would run beside the build.
ifeq ($(filter clean distclean,$(MAKECMDGOALS)),)
MAKEFLAGS += -j$(shell nproc)
endif
export SOURCE_DATE_EPOCH ?= $(shell git log -1 --format=%ct 2>/dev/null || echo 0)

include builder/setup/versions

WARN      := -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wmissing-prototypes
CSTD      := -std=gnu11 -D_GNU_SOURCE
INCLUDES  := -Ilib -Iexecutor -Ibuilder

SYSROOT   := $(BUILD)/musl/sysroot
MUSL_CC   := musl-gcc
MUSL_CFLAGS  := $(CSTD) $(WARN) -Os -ffunction-sections -fdata-sections \
	-isystem $(SYSROOT)/include -isystem $(SYSROOT)/include/json-c $(INCLUDES)
MUSL_LDFLAGS := -static -Wl,--gc-sections -L$(SYSROOT)/lib
MUSL_LIBS    := -lkmod -lblkid -larchive -lzstd -llzma -lz -lnettle

# Headers of the host-only libraries (the aggregator's: libpq, json-c).
HOST_INCLUDES := -I/usr/include/postgresql -I/usr/include/json-c

HOST_CC      := gcc
HOST_CFLAGS  := $(CSTD) $(WARN) -O2 -g $(INCLUDES) $(HOST_INCLUDES)
# The host programs' own objects (the archives and each program's main) at -O3, where ingest
# runs fewer instructions (tests/bench/README.md). The unit tests' drivers and the fixtures,
# compiled where they link, keep -O2: -O3's inlining makes GCC's format-truncation and
# dangling-pointer checks fire on their path buffers, which -Werror refuses.
HOST_OBJ_OPT := -O3
ASAN_FLAGS   := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
ASAN_CFLAGS  := $(CSTD) $(WARN) -O1 -g $(ASAN_FLAGS) $(INCLUDES) $(HOST_INCLUDES)
HOST_LIBS    := -lkmod -lblkid -larchive -lnettle

FUZZ_CC      := clang
FUZZ_CFLAGS  := $(CSTD) $(WARN) -O1 -g -fsanitize=fuzzer-no-link,address,undefined $(INCLUDES) $(HOST_INCLUDES)

# objs FLAVOR, SOURCES
objs = $(patsubst %.c,$(BUILD)/$(1)/obj/%.o,$(2))
# srcs DIR: every C source under DIR, at any depth (a component's folders by role)
srcs = $(sort $(shell find $(1) -name '*.c'))

.PHONY: all check demo bench clean distclean setup sysroot kernel
.DEFAULT_GOAL := all

# ---- set-up: host packages, deb-src, the musl sysroot, the test kernel ----
HOST_DEPS_STAMP := $(BUILD)/stamps/host-deps
SYSROOT_STAMP   := $(BUILD)/stamps/sysroot
KERNEL_STAMP    := $(BUILD)/kernel/release

$(HOST_DEPS_STAMP): builder/setup/host-deps.sh
	@builder/setup/host-deps.sh
	@mkdir -p $(@D) && touch $@

$(SYSROOT_STAMP): builder/setup/sysroot.sh builder/setup/versions | $(HOST_DEPS_STAMP)
	@builder/setup/sysroot.sh $(BUILD)/musl
	@mkdir -p $(@D) && touch $@

$(KERNEL_STAMP): builder/setup/fetch-kernel.sh | $(HOST_DEPS_STAMP)
	@builder/setup/fetch-kernel.sh $(BUILD)/kernel

setup: $(HOST_DEPS_STAMP)
sysroot: $(SYSROOT_STAMP)
kernel: $(KERNEL_STAMP)

# ---- compile rules, one per flavor ----
$(BUILD)/musl/obj/%.o: %.c | $(SYSROOT_STAMP)
	@mkdir -p $(@D)
	$(MUSL_CC) $(MUSL_CFLAGS) -MMD -MP -c $< -o $@

$(BUILD)/host/obj/%.o: %.c | $(HOST_DEPS_STAMP)
	@mkdir -p $(@D)
	$(HOST_CC) $(HOST_CFLAGS) $(HOST_OBJ_OPT) -MMD -MP -c $< -o $@

$(BUILD)/asan/obj/%.o: %.c | $(HOST_DEPS_STAMP)
	@mkdir -p $(@D)
	$(HOST_CC) $(ASAN_CFLAGS) -MMD -MP -c $< -o $@

$(BUILD)/fuzz/obj/%.o: %.c | $(HOST_DEPS_STAMP)
	@mkdir -p $(@D)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -MMD -MP -c $< -o $@

# archive FLAVOR NAME SOURCES -> $(BUILD)/FLAVOR/libNAME.a
define archive
$(BUILD)/$(1)/lib$(2).a: $(call objs,$(1),$(3))
	@rm -f $$@
	ar rcs $$@ $$^
endef

# ---- components ----
include lib/build.mk
include executor/build.mk
include builder/build.mk
include aggregator/build.mk
include tests/build.mk
include initramfs/build.mk
include builder/setup/igt.mk
# The man pages (built by `make`) and `make install`.
include install.mk

# The main job: build everything, run one full cycle in the QEMU lab, say where the results are.
# The demo's series are built by the lab's build command (tests/lab/build-series), which runs
# bootci-builder as the test image's rule does.
demo: all
	@$(IMAGE_ENV) BOOTCI_BUILDER=$(abspath $(BOOTCI_BUILDER)) BOOTCI_KERNEL=$(abspath $(BUILD)/kernel) \
		tests/lab/demo $(BUILD)

# Benchmarks (timing goals live here, never in tests): ratios against a peer measured in the same run.
# The dracut bench installs dracut-core (apt-get, through sudo when not root) if it is absent;
# the piglit bench (report-vs-piglit.sh) installs piglit the same way.
bench: all
	@tests/bench/executor-overhead $(BUILD)
	@tests/bench/builder-vs-dracut.sh $(BUILD)
	@tests/bench/ingest-vs-tar.sh $(BUILD)
	@tests/bench/report-vs-piglit.sh $(BUILD)
	@tests/bench/report-noise.py $(BUILD)
	@tests/bench/upload-throughput $(BUILD)
	@tests/bench/serve-upload.sh $(BUILD)
	@tests/bench/resultgen-binaries.sh $(BUILD)
	@tests/bench/resultgen-vs-igt.sh $(BUILD)
	@tests/bench/igt-vs-runner $(BUILD)
	@tests/bench/pages-matrix.sh $(BUILD)
	@tests/bench/serve-consoles.sh $(BUILD)
	@tests/bench/patchwork-latency.sh $(BUILD)
	@tests/bench/lab-day.sh $(BUILD)

clean:
	rm -rf $(BUILD)/host $(BUILD)/asan $(BUILD)/musl/obj $(BUILD)/musl/bin \
		$(BUILD)/musl/*.a $(BUILD)/fuzz $(BUILD)/initramfs $(BUILD)/images $(BUILD)/lab \
		$(BUILD)/tests $(BUILD)/demo $(BUILD)/bench $(BUILD)/man

# `make clean` keeps IGT ($(BUILD)/igt: minutes to rebuild); `make igt-clean` drops it.
.PHONY: igt-clean
igt-clean:
	rm -rf $(BUILD)/igt

# `make distclean` also drops the sysroot and the kernel (minutes to rebuild).
distclean:
	rm -rf $(BUILD)

-include $(shell find $(BUILD)/host $(BUILD)/asan $(BUILD)/fuzz $(BUILD)/musl/obj -name '*.d' 2>/dev/null)
