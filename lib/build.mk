# lib/: the internal library shared by every bootci program (libbootci.a), in
# every flavor: the musl sysroot has every library a module needs (json-c,
# libzstd, nettle), and a program links only the modules it uses.
LIB_SRCS      := $(call srcs,lib)

$(eval $(call archive,musl,bootci,$(LIB_SRCS)))
$(eval $(call archive,host,bootci,$(LIB_SRCS)))
$(eval $(call archive,asan,bootci,$(LIB_SRCS)))
$(eval $(call archive,fuzz,bootci,$(LIB_SRCS)))
