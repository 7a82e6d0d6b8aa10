# tests/: unit tests (cmocka, plain and ASan/UBSan host builds), fuzz targets,
# fixture programs speaking the test protocol, and TAP scripts (builder, lab).
#
# Components add the name of their archive to TEST_ARCHIVES (executor/build.mk,
# builder/build.mk); every unit test links all of them plus libbootci.

UNIT_SRCS    := $(wildcard tests/unit/test_*.c)
# Helpers shared by the unit tests (fake root trees, fixture paths).
UNIT_SUPPORT := $(filter-out $(UNIT_SRCS),$(wildcard tests/unit/*.c))
UNIT_HOST    := $(patsubst tests/unit/%.c,$(BUILD)/host/tests/%,$(UNIT_SRCS))
UNIT_ASAN    := $(patsubst tests/unit/%.c,$(BUILD)/asan/tests/%,$(UNIT_SRCS))
FUZZ_SRCS    := $(wildcard tests/fuzz/fuzz_*.c)
FUZZ_BINS    := $(patsubst tests/fuzz/%.c,$(BUILD)/fuzz/bin/%,$(FUZZ_SRCS))
FIXTURE_SRCS := $(wildcard tests/fixtures/*.c)
FIXTURES_MUSL := $(patsubst tests/fixtures/%.c,$(BUILD)/musl/bin/fixtures/%,$(FIXTURE_SRCS))
FIXTURES_HOST := $(patsubst tests/fixtures/%.c,$(BUILD)/host/bin/fixtures/%,$(FIXTURE_SRCS))
TAP_SCRIPTS  = $(sort $(wildcard tests/*/*.t))

# archives FLAVOR: the archive files a test of that flavor links, libbootci last
archives = $(foreach a,$(TEST_ARCHIVES) bootci,$(BUILD)/$(1)/lib$(a).a)

$(BUILD)/host/tests/%: tests/unit/%.c $(UNIT_SUPPORT) $(wildcard tests/unit/*.h) $(call archives,host)
	@mkdir -p $(@D)
	$(HOST_CC) $(HOST_CFLAGS) -Itests/unit -o $@ $< $(UNIT_SUPPORT) $(call archives,host) -lcmocka $(HOST_LIBS) $(TEST_EXTRA_LIBS)

$(BUILD)/asan/tests/%: tests/unit/%.c $(UNIT_SUPPORT) $(wildcard tests/unit/*.h) $(call archives,asan)
	@mkdir -p $(@D)
	$(HOST_CC) $(ASAN_CFLAGS) -Itests/unit -o $@ $< $(UNIT_SUPPORT) $(call archives,asan) -lcmocka $(HOST_LIBS) $(TEST_EXTRA_LIBS)

$(BUILD)/fuzz/bin/%: tests/fuzz/%.c $(call archives,fuzz)
	@mkdir -p $(@D)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer -o $@ $< $(call archives,fuzz) $(HOST_LIBS) $(TEST_EXTRA_LIBS)

# Fixtures run inside the test image (static musl) and in unit tests (host).
$(BUILD)/musl/bin/fixtures/%: tests/fixtures/%.c $(wildcard tests/fixtures/*.h) | $(SYSROOT_STAMP)
	@mkdir -p $(@D)
	$(MUSL_CC) $(MUSL_CFLAGS) -static -o $@ $<

$(BUILD)/host/bin/fixtures/%: tests/fixtures/%.c $(wildcard tests/fixtures/*.h) | $(HOST_DEPS_STAMP)
	@mkdir -p $(@D)
	$(HOST_CC) $(HOST_CFLAGS) -o $@ $<

all: $(FIXTURES_MUSL) $(FIXTURES_HOST)

.PHONY: check check-unit check-fuzz check-scripts
TEST_RUNNER := tests/run-tests.sh

# FUZZ_SECONDS: how long each fuzz target explores beyond its corpus in `make check`.
FUZZ_SECONDS ?= 5

check: all $(KERNEL_STAMP) $(UNIT_HOST) $(UNIT_ASAN) $(FUZZ_BINS)
	@BUILD=$(abspath $(BUILD)) SRC=$(CURDIR) FUZZ_SECONDS=$(FUZZ_SECONDS) $(TEST_RUNNER) \
		$(addprefix cmocka:,$(UNIT_HOST) $(UNIT_ASAN)) \
		$(addprefix fuzz:,$(FUZZ_BINS)) \
		$(addprefix tap:,$(TAP_SCRIPTS))

# Subsets, for a developer's inner loop.
check-unit: $(UNIT_HOST) $(UNIT_ASAN)
	@BUILD=$(abspath $(BUILD)) SRC=$(CURDIR) $(TEST_RUNNER) $(addprefix cmocka:,$^)
check-fuzz: $(FUZZ_BINS)
	@BUILD=$(abspath $(BUILD)) SRC=$(CURDIR) FUZZ_SECONDS=$(FUZZ_SECONDS) $(TEST_RUNNER) $(addprefix fuzz:,$^)
check-scripts: all
	@BUILD=$(abspath $(BUILD)) SRC=$(CURDIR) $(TEST_RUNNER) $(addprefix tap:,$(TAP_SCRIPTS))

# Bench programs (tests/bench/*.c): load generators and packers the benches run, on libbootci.
BENCH_SRCS := $(wildcard tests/bench/*.c)
BENCH_BINS := $(patsubst tests/bench/%.c,$(BUILD)/host/bin/bench/%,$(BENCH_SRCS))

$(BUILD)/host/bin/bench/%: tests/bench/%.c $(BUILD)/host/libbootci.a
	@mkdir -p $(@D)
	$(HOST_CC) $(HOST_CFLAGS) -o $@ $< $(BUILD)/host/libbootci.a -lcurl -lzstd -ljson-c -lnettle -lm

all: $(BENCH_BINS)
