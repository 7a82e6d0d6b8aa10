# lib/: the internal library shared by every bootci program (libbootci.a).
LIB_SRCS := $(wildcard lib/*.c)

$(eval $(call archive,musl,bootci,$(LIB_SRCS)))
$(eval $(call archive,host,bootci,$(LIB_SRCS)))
$(eval $(call archive,asan,bootci,$(LIB_SRCS)))
$(eval $(call archive,fuzz,bootci,$(LIB_SRCS)))
