/* SPDX-License-Identifier: MIT */
/*
 * igt_runner's socket protocol (IGT 1.27) and the `comms` file of a job
 * folder: the packets an IGT test sends its runner, and the dump of them the
 * runner keeps. Reader and writer of both live here, nowhere else: the
 * executor receives and dumps packets (executor/igt/comms.c), the results
 * generator judges a job from its dump (lib/resultgen/comms.c).
 *
 * The channel. The runner makes one AF_UNIX SOCK_DGRAM socket pair per job
 * and gives the test one end, its number in the environment:
 * IGT_RUNNER_SOCKET_FD=N (BCI_IGT_RUNNER_SOCKET_ENV, igt_output_strings.h,
 * with the packet types' names). A test built with IGT's library then sends every
 * protocol event and every log line as one datagram (one packet) instead of
 * printing it; what it writes on fd 1 and 2 itself (or a library does, such
 * as cairo's "Fontconfig error") is no longer protocol.
 *
 * A packet, every integer in the host's byte order (IGT dumps its struct):
 *
 *   offset 0   u32  size       the whole packet, header included (>= 16)
 *          4   u32  type       below
 *          8   i32  sender pid
 *         12   i32  sender tid (0 from a signal handler)
 *         16        payload: size - 16 bytes, by type:
 *
 *   type  name                    payload
 *   0     invalid                 (none; only read, never sent)
 *   1     log                     u8 stream (1 stdout, 2 stderr), cstring text
 *   2     exec                    cstring command line, argv joined by ' '
 *                                 (the runner's, before the test starts)
 *   3     exit                    i32 exit status (>= 0, -signal, as journal.txt),
 *                                 cstring seconds "%.3f" (the runner's)
 *   4     subtest start           cstring name
 *   5     subtest result          cstring name, cstring result word (SUCCESS,
 *                                 FAIL, SKIP, CRASH, TIMEOUT), cstring seconds,
 *                                 cstring reason ("" for none)
 *   6     dynamic subtest start   cstring name
 *   7     dynamic subtest result  as 5
 *   8     version                 cstring "IGT-Version: ...\n"
 *   9     result override         cstring result, lowercase piglit word
 *                                 (the runner's: "timeout", "notrun", "warn")
 *
 * A cstring is bytes up to and including a NUL inside the packet. Bytes
 * after the last field are ignored; a field that is missing leaves the
 * packet "incomplete" (bci_comms_packet.complete false), which IGT's reader
 * calls invalid for every type except exit (whose time string may be
 * missing). Types above 9 are unknown: read and skipped.
 *
 * The dump (the job folder's `comms`): records one after the other, each
 *
 *   u32 canary 0x49475431 ("IGT1" as IGT builds it: 'I'<<24|'G'<<16|'T'<<8|'1',
 *       stored in host order: "1TGI" on x86), then the packet's size bytes.
 *
 * A dump that holds no packet but exec ones means the test did not speak the
 * socket: its job is judged from journal.txt, out.txt and err.txt instead.
 */
#ifndef BCI_RUNNER_COMMS_H
#define BCI_RUNNER_COMMS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define BCI_COMMS_HEADER_SIZE 16u
#define BCI_COMMS_CANARY 0x49475431u
/* The largest datagram the executor takes whole (igt_runner's receive buffer). */
#define BCI_COMMS_MAX_PACKET (256u * 1024u)

enum bci_comms_type {
	BCI_COMMS_INVALID = 0,
	BCI_COMMS_LOG = 1,
	BCI_COMMS_EXEC = 2,
	BCI_COMMS_EXIT = 3,
	BCI_COMMS_SUBTEST_START = 4,
	BCI_COMMS_SUBTEST_RESULT = 5,
	BCI_COMMS_DYNAMIC_START = 6,
	BCI_COMMS_DYNAMIC_RESULT = 7,
	BCI_COMMS_VERSION = 8,
	BCI_COMMS_RESULT_OVERRIDE = 9,
	BCI_COMMS_TYPE_COUNT
};

/*
 * One packet, decoded. The strings point into the bytes it was read from
 * (valid as long as they are); a field the packet lacks is NULL.
 *   log:        stream, text
 *   exec:       text (command line)
 *   exit:       exit_status, time
 *   *_start:    name
 *   *_result:   name, result, time, reason
 *   version:    text
 *   override:   result
 */
struct bci_comms_packet {
	uint32_t size, type;
	int32_t pid, tid;
	bool complete;		/* every field of its type is there (unknown types: false) */
	uint8_t stream;
	int32_t exit_status;
	const char *text, *name, *result, *time, *reason;
};

/* "log", "exec", ... for a type, "unknown" above the known ones. */
const char *bci_comms_type_name(uint32_t type);

/*
 * Decodes the packet of @len bytes at @data (a datagram as received, or a
 * record's packet). -EINVAL when @len is under the header or differs from
 * the size field; else 0, with p->complete saying whether its fields are all
 * there.
 */
int bci_comms_packet_decode(const void *data, size_t len, struct bci_comms_packet *p);

/*
 * The next record of a dump: @buf of @len bytes, *@pos the offset of the
 * record (advanced past it). 1 with the packet in @p (pointing into @buf),
 * 0 at the end, -EINVAL when the bytes at *@pos are no whole record (a
 * wrong canary, a size under the header or past the end); *@pos is left on
 * the bad record and @err says what is wrong and where.
 */
int bci_comms_next(const char *buf, size_t len, size_t *pos, struct bci_comms_packet *p,
		   char *err, size_t err_size);

/*
 * Encodes @p's fields for its type (as listed above; NULL strings as "")
 * with the calling process's pid and tid into @buf. Returns the packet's
 * size, which is more than @size when it did not fit (nothing usable then;
 * @buf NULL with @size 0 asks for the size),
 * or -EINVAL for a type that has no encoding or a packet over 4 GiB.
 */
ssize_t bci_comms_packet_encode(const struct bci_comms_packet *p, void *buf, size_t size);

/*
 * Appends one record (canary, then the @len bytes of the packet at @packet)
 * to the dump @fd with one write, so that a dump only ever ends inside a
 * record when the machine died mid-write. 0 or -errno.
 */
int bci_comms_record_write(int fd, const void *packet, size_t len);

/*
 * How many leading bytes of a dump are whole records: where a resumed job
 * appends, after the tail a crash left (a cut record, NUL bytes) is cut.
 */
size_t bci_comms_valid_prefix(const char *buf, size_t len);

#endif
