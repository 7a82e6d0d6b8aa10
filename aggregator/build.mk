# aggregator/: bootci-aggregator, the host tool (and the known-good image's
# collector). Its logic lives in lib/ (resultgen.c, jsonw.c, igtout.c); main.c
# only parses the command line.
AGGREGATOR_BIN := $(BUILD)/host/bin/bootci-aggregator

$(AGGREGATOR_BIN): $(call objs,host,aggregator/main.c) $(BUILD)/host/libbootci.a
	@mkdir -p $(@D)
	$(HOST_CC) $(HOST_CFLAGS) -o $@ $(filter %.o %.a,$^) $(HOST_LIBS)

all: $(AGGREGATOR_BIN)
