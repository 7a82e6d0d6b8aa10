// SPDX-License-Identifier: MIT
/* libmicrohttpd, loaded when first called (lazy.h): serve (serve/). */
#include "lazy.h"

#include "dlopen_note.h"

#include <microhttpd.h>
#include <stdarg.h>

#define SONAME "libmicrohttpd.so.12"

static struct bci_lazy_lib lib = { .soname = SONAME, .package = "libmicrohttpd12" };
/* The master's alone: an image that carries the aggregator does without it. */
BCI_DLOPEN_NOTE(dlopen_note, "[{\"soname\":[\"" SONAME "\"],\"feature\":\"serve\",\"description\":\"serve, the CI master's HTTP(S) server\",\"priority\":\"suggested\"}]");

#define MHD_FUNCTIONS(FN, VOID)                                                             \
	FN(struct MHD_Daemon *, MHD_start_daemon_va,                                        \
	   (unsigned int flags, uint16_t port, MHD_AcceptPolicyCallback apc, void *apc_cls, \
	    MHD_AccessHandlerCallback dh, void *dh_cls, va_list ap),                        \
	   (flags, port, apc, apc_cls, dh, dh_cls, ap))                                     \
	VOID(MHD_stop_daemon, (struct MHD_Daemon *daemon), (daemon))                        \
	FN(MHD_socket, MHD_quiesce_daemon, (struct MHD_Daemon *daemon), (daemon))           \
	FN(struct MHD_Response *, MHD_create_response_from_buffer,                          \
	   (size_t size, void *buffer, enum MHD_ResponseMemoryMode mode), (size, buffer, mode)) \
	FN(struct MHD_Response *, MHD_create_response_from_callback,                        \
	   (uint64_t size, size_t block_size, MHD_ContentReaderCallback crc, void *crc_cls, \
	    MHD_ContentReaderFreeCallback crfc),                                            \
	   (size, block_size, crc, crc_cls, crfc))                                          \
	FN(struct MHD_Response *, MHD_create_response_from_fd64, (uint64_t size, int fd),   \
	   (size, fd))                                                                      \
	FN(enum MHD_Result, MHD_add_response_header,                                        \
	   (struct MHD_Response *response, const char *header, const char *content),        \
	   (response, header, content))                                                     \
	VOID(MHD_destroy_response, (struct MHD_Response *response), (response))             \
	FN(enum MHD_Result, MHD_queue_response,                                             \
	   (struct MHD_Connection *connection, unsigned int status_code,                   \
	    struct MHD_Response *response),                                                 \
	   (connection, status_code, response))                                             \
	FN(const char *, MHD_lookup_connection_value,                                       \
	   (struct MHD_Connection *connection, enum MHD_ValueKind kind, const char *key),   \
	   (connection, kind, key))                                                         \
	VOID(MHD_suspend_connection, (struct MHD_Connection *connection), (connection))    \
	VOID(MHD_resume_connection, (struct MHD_Connection *connection), (connection))

BCI_LAZY_SHIMS(bci_lazy_mhd, MHD_FUNCTIONS, "MHD_get_connection_info", "MHD_get_daemon_info");

/* The option list goes on as the library's own va_list form takes it. */
struct MHD_Daemon *(MHD_start_daemon)(unsigned int flags, uint16_t port,
				      MHD_AcceptPolicyCallback apc, void *apc_cls,
				      MHD_AccessHandlerCallback dh, void *dh_cls, ...)
{
	struct MHD_Daemon *daemon;
	va_list ap;

	va_start(ap, dh_cls);
	daemon = MHD_start_daemon_va(flags, port, apc, apc_cls, dh, dh_cls, ap);
	va_end(ap);
	return daemon;
}

/*
 * The info getters are variadic for kinds that take an argument; none that
 * serve asks for (the client's address, the daemon's bound port) does, and
 * the library reads no argument for them.
 */
typedef const union MHD_ConnectionInfo *(*connection_info_fn)(struct MHD_Connection *,
								enum MHD_ConnectionInfoType, ...);
typedef const union MHD_DaemonInfo *(*daemon_info_fn)(struct MHD_Daemon *,
							enum MHD_DaemonInfoType, ...);

const union MHD_ConnectionInfo *(MHD_get_connection_info)(struct MHD_Connection *connection,
							    enum MHD_ConnectionInfoType info_type, ...)
{
	return BCI_LAZY_RESOLVE(lib, connection_info_fn, "MHD_get_connection_info")(connection,
										info_type);
}

const union MHD_DaemonInfo *(MHD_get_daemon_info)(struct MHD_Daemon *daemon,
						    enum MHD_DaemonInfoType info_type, ...)
{
	return BCI_LAZY_RESOLVE(lib, daemon_info_fn, "MHD_get_daemon_info")(daemon, info_type);
}

