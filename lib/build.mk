# lib/: the internal library shared by every bootci program (libbootci.a).
# LIB_HOST_ONLY: modules that need a library the musl sysroot lacks (json-c for
# the upload manifest, which the run archive carries); they are in the host,
# ASan and fuzz archives, not in the musl one.
LIB_SRCS      := $(call srcs,lib)
LIB_HOST_ONLY := lib/manifest.c lib/manifest_read.c $(call srcs,lib/run_archive)
LIB_MUSL_SRCS := $(filter-out $(LIB_HOST_ONLY),$(LIB_SRCS))

$(eval $(call archive,musl,bootci,$(LIB_MUSL_SRCS)))
$(eval $(call archive,host,bootci,$(LIB_SRCS)))
$(eval $(call archive,asan,bootci,$(LIB_SRCS)))
$(eval $(call archive,fuzz,bootci,$(LIB_SRCS)))
