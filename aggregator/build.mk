# aggregator/: two programs for two machines, and the results generator alone.
#
#   collect/  bootci-collect: the known-good image's uploader (every test machine)
#   master/   bootci-aggregator: the CI master (serve, ingest, report, schedule, ...)
#   results/  bootci-results: `bootci-aggregator results` alone, static, libc only
#
# Each program's folder but its main.c is an archive (libcollect.a,
# libmaster.a), so unit tests and fuzzers link it; each program links exactly
# the libraries it uses.

# bootci-collect is static musl, its libraries from the sysroot (libcurl with
# OpenSSL, builder/setup/sysroot.sh): the known-good image packs it and needs
# no glibc; tests run the same binary on the host. The host, ASan and fuzz
# flavors of libcollect.a are for unit tests and fuzzers.
COLLECT_BIN       := $(BUILD)/musl/bin/bootci-collect
COLLECT_SRCS      := $(filter-out aggregator/collect/main.c,$(call srcs,aggregator/collect))
COLLECT_MUSL_LIBS := -lcurl -lssl -lcrypto -lzstd -ljson-c -lnettle
# What the host flavors of its sources need (unit tests, fuzzers).
COLLECT_LIBS      := -lzstd -lcurl -ljson-c -lnettle -lm

MASTER_BIN   := $(BUILD)/host/bin/bootci-aggregator
MASTER_SRCS  := $(filter-out aggregator/master/main.c,$(call srcs,aggregator/master)) \
	aggregator/results/results.c
MASTER_LIBS  := -lmicrohttpd -lpq -lcurl -lnettle -lsqlite3 -ljson-c -lzstd -lpthread -lm

RESULTS_BIN  := $(BUILD)/host/bin/bootci-results

$(foreach f,musl host asan fuzz,$(eval $(call archive,$(f),collect,$(COLLECT_SRCS))))
$(foreach f,host asan fuzz,$(eval $(call archive,$(f),master,$(MASTER_SRCS))))

TEST_ARCHIVES += master collect
TEST_EXTRA_LIBS += $(MASTER_LIBS) $(COLLECT_LIBS)

$(COLLECT_BIN): $(call objs,musl,aggregator/collect/main.c) $(BUILD)/musl/libcollect.a $(BUILD)/musl/libbootci.a
	@mkdir -p $(@D)
	$(MUSL_CC) $(MUSL_LDFLAGS) -o $@ $^ $(COLLECT_MUSL_LIBS)
	@tests/check-static.sh $@

$(MASTER_BIN): $(call objs,host,aggregator/master/main.c) $(BUILD)/host/libmaster.a $(BUILD)/host/libbootci.a
	@mkdir -p $(@D)
	$(HOST_CC) $(HOST_CFLAGS) -o $@ $^ $(MASTER_LIBS)

# The archives give it only results.o and the results generator of lib/.
$(RESULTS_BIN): $(call objs,host,aggregator/results/main.c) $(BUILD)/host/libmaster.a $(BUILD)/host/libbootci.a
	@mkdir -p $(@D)
	$(HOST_CC) $(HOST_CFLAGS) -static -o $@ $^ -lpthread -lm

all: $(COLLECT_BIN) $(MASTER_BIN) $(RESULTS_BIN)
