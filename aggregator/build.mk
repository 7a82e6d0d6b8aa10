# aggregator/: bootci-aggregator, the CI master's tool (ingest, serve, report)
# and the known-good image's collector (collect). main.c only dispatches the
# subcommands; each command lives in its folder (collect/, serve/, store/, ...)
# and libaggregator.a holds all of them, so unit tests and fuzzers link it.
AGGREGATOR_BIN  := $(BUILD)/host/bin/bootci-aggregator
AGGREGATOR_SRCS := $(filter-out aggregator/main.c aggregator/results_main.c,$(wildcard aggregator/*.c aggregator/*/*.c))
# The glibc libraries the aggregator links (Debian's packages, host-deps.sh).
AGGREGATOR_LIBS := -lnettle -lsqlite3 -ljson-c -lefiboot -lefivar -lzstd -lpthread -lm

$(eval $(call archive,host,aggregator,$(AGGREGATOR_SRCS)))
$(eval $(call archive,asan,aggregator,$(AGGREGATOR_SRCS)))
$(eval $(call archive,fuzz,aggregator,$(AGGREGATOR_SRCS)))

TEST_ARCHIVES += aggregator
TEST_EXTRA_LIBS += $(AGGREGATOR_LIBS)

$(AGGREGATOR_BIN): $(call objs,host,aggregator/main.c) $(BUILD)/host/libaggregator.a $(BUILD)/host/libbootci.a
	@mkdir -p $(@D)
	$(HOST_CC) $(HOST_CFLAGS) -o $@ $(filter %.o %.a,$^) $(HOST_LIBS) $(AGGREGATOR_LIBS)

all: $(AGGREGATOR_BIN)

# bootci-results: `bootci-aggregator results` alone, static, with libc only
# (aggregator/results_main.c). The archives give it only results.o and the
# results generator of lib/.
RESULTS_BIN := $(BUILD)/host/bin/bootci-results
$(RESULTS_BIN): $(call objs,host,aggregator/results_main.c) $(BUILD)/host/libaggregator.a $(BUILD)/host/libbootci.a
	@mkdir -p $(@D)
	$(HOST_CC) $(HOST_CFLAGS) -static -o $@ $(filter %.o %.a,$^) -lpthread -lm

all: $(RESULTS_BIN)
