// SPDX-License-Identifier: MIT
/*
 * igt_runner's socket protocol for one job (lib/runner_comms.h has the
 * format): a datagram socket pair per job, as igt_runner 1.27 makes it, the
 * test's end passed in IGT_RUNNER_SOCKET_FD, and every packet it sends
 * appended to the job folder's `comms` as it arrives, after the runner's
 * own exec packet. A test built with IGT's library then sends its protocol
 * there instead of printing it; each subtest or dynamic subtest packet is
 * turned into the text protocol line it stands for and handed to the job's
 * line handler (on_line, set by job.c as for its stdout), so journal.txt,
 * bootci's journal, the timers and the console's verdict follow the packets
 * exactly as they follow the text.
 * A test that does not speak the socket leaves `comms` with the exec packet
 * only and is read from its stdout as before; the results generator then
 * judges it from the text files, as igt_results does.
 *
 * When the test spoke the socket, the job's end goes into `comms` too, as
 * igt_runner writes it there: a "timeout" result override when the job was
 * stopped, then the exit packet (exit status, seconds). journal.txt still
 * gets its exit line: bootci's resume reads it, igt_results ignores
 * journal.txt when comms has packets.
 *
 * Durability (DESIGN.md): `comms` is what survives a panic, so it is
 * fdatasync'ed at every packet that starts or ends a (dynamic) subtest or
 * overrides a result, before the journal.txt line the same event writes; the
 * exec packet is durable with the job's start, and the job's end packets with
 * its outputs in the next job's start barrier (job.c), before the test
 * starts and before journal.txt's exit line. A subtest journal.txt says started is
 * always in comms too; one comms has and journal.txt lacks is run again, and
 * both runs are in comms, the later result winning, as after any igt_runner
 * resume. Log
 * packets between those are written as they come and made durable with the
 * next one, as out.txt and err.txt are at every subtest boundary.
 *
 * Beyond output_limit bytes of log packets, further log packets are counted
 * and dropped (protocol packets are always kept, the results must stay
 * complete), and a last log packet says how many.
 */
#include "igt.h"

#include "fsutil.h"
#include "igt_output_strings.h"
#include "runner_comms.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

/* A resumed job appends after what a crash left: whole records only. */
static int cut_damaged_tail(struct bci_igt_job *job, int fd)
{
	struct stat st;
	size_t good;
	void *map;

	if (fstat(fd, &st) < 0)
		return -errno;
	if (st.st_size == 0)
		return 0;
	map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	if (map == MAP_FAILED)
		return -errno;
	good = bci_comms_valid_prefix(map, (size_t)st.st_size);
	munmap(map, (size_t)st.st_size);
	if (good == (size_t)st.st_size)
		return 0;
	bci_warn("job %u: comms: %llu bytes after the last whole record (a crash mid-write) cut",
		 job->index + 1, (unsigned long long)((size_t)st.st_size - good));
	return ftruncate(fd, (off_t)good) < 0 ? -errno : 0;
}

int bci_igt_comms_open(struct bci_igt_job *job, const char *dir)
{
	struct bci_igt_comms *c = &job->comms;
	char path[PATH_MAX + 16];
	int pair[2], ret;

	snprintf(path, sizeof(path), "%.*s/%s", PATH_MAX - 1, dir, BCI_RESULTS_JOB_COMMS);
	c->file_fd = open(path, O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
	if (c->file_fd < 0)
		return -errno;
	ret = cut_damaged_tail(job, c->file_fd);
	if (ret < 0)
		return ret;
	c->buf = malloc(BCI_COMMS_MAX_PACKET);
	if (!c->buf)
		return -ENOMEM;
	if (socketpair(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0, pair) < 0)
		return -errno;
	c->sock_fd = pair[0];
	c->child_fd = pair[1];
	/* The test's end stays open across its exec: the only fd it inherits besides 0-2. */
	if (fcntl(c->child_fd, F_SETFD, 0) < 0)
		return -errno;
	snprintf(c->env, sizeof(c->env), BCI_IGT_RUNNER_SOCKET_ENV "=%d", c->child_fd);
	return 0;
}

static int sync_comms(struct bci_igt_comms *c)
{
	struct stat st;

	if (c->file_fd < 0 || (fstat(c->file_fd, &st) == 0 && st.st_size == c->synced))
		return 0;
	if (fdatasync(c->file_fd) < 0)
		return -errno;
	c->synced = st.st_size;
	return 0;
}

/* Encodes @p and appends it; @sync makes it durable at once. */
static void append_packet(struct bci_igt_job *job, const struct bci_comms_packet *p, bool sync)
{
	struct bci_igt_comms *c = &job->comms;
	/* An exec packet holds the whole command line: a multiple-mode job's is kilobytes. */
	ssize_t n = bci_comms_packet_encode(p, NULL, 0);
	char *packet = n > 0 ? malloc((size_t)n) : NULL;
	int ret = n < 0 ? (int)n : packet ? 0 : -ENOMEM;

	if (ret == 0 && bci_comms_packet_encode(p, packet, (size_t)n) != n)
		ret = -EINVAL;
	if (ret == 0)
		ret = bci_comms_record_write(c->file_fd, packet, (size_t)n);
	if (ret == 0 && sync)
		ret = sync_comms(c);
	free(packet);
	if (ret < 0)
		bci_warn("job %u: cannot write a %s packet to comms: %s", job->index + 1,
			 bci_comms_type_name(p->type), strerror(-ret));
}

void bci_igt_comms_exec(struct bci_igt_job *job)
{
	char cmdline[sizeof(job->argv_path) + sizeof(job->argv_subtests) + sizeof(job->argv_dynamic) + 64];
	size_t used = 0;

	cmdline[0] = '\0';
	for (int i = 0; job->argv[i] && used < sizeof(cmdline); i++)
		used += (size_t)snprintf(cmdline + used, sizeof(cmdline) - used, "%s%s", i ? " " : "",
					 job->argv[i]);
	append_packet(job, &(struct bci_comms_packet){ .type = BCI_COMMS_EXEC, .text = cmdline }, false);
}

bool bci_igt_comms_note(struct bci_igt_job *job, const char *text)
{
	if (!job->comms.used || job->comms.file_fd < 0)
		return false;
	append_packet(job, &(struct bci_comms_packet){ .type = BCI_COMMS_LOG, .stream = 1,
						       .text = text }, true);
	return true;
}

void bci_igt_comms_started(struct bci_igt_job *job)
{
	if (job->comms.child_fd >= 0)
		close(job->comms.child_fd);
	job->comms.child_fd = -1;
}

/* The text protocol line a packet stands for, handed to the job; 0 for other packets. */
static int protocol_line(const struct bci_comms_packet *p, char *line, size_t size)
{
	switch (p->type) {
	case BCI_COMMS_SUBTEST_START:
		return snprintf(line, size, BCI_IGT_STARTING_SUBTEST "%s", p->name);
	case BCI_COMMS_DYNAMIC_START:
		return snprintf(line, size, BCI_IGT_STARTING_DYNAMIC_SUBTEST "%s", p->name);
	case BCI_COMMS_SUBTEST_RESULT:
		return snprintf(line, size, BCI_IGT_SUBTEST_RESULT "%s: %s (%ss)", p->name, p->result,
				p->time);
	case BCI_COMMS_DYNAMIC_RESULT:
		return snprintf(line, size, BCI_IGT_DYNAMIC_SUBTEST_RESULT "%s: %s (%ss)", p->name,
				p->result, p->time);
	default:
		return 0;
	}
}

/* A datagram that is no packet: said in comms as igt_runner says it, and the result is a warn. */
static void bad_datagram(struct bci_igt_job *job, ssize_t got)
{
	bci_warn("job %u: socket: a datagram of %zd bytes that is no packet: discarded",
		 job->index + 1, got);
	append_packet(job, &(struct bci_comms_packet){ .type = BCI_COMMS_LOG, .stream = 1,
						       .text = BCI_IGT_RUNNER_BAD_PACKET }, false);
	append_packet(job, &(struct bci_comms_packet){ .type = BCI_COMMS_RESULT_OVERRIDE,
						       .result = "warn" }, true);
}

static void handle_datagram(struct bci_igt_job *job, ssize_t got)
{
	struct bci_igt_comms *c = &job->comms;
	unsigned long long limit = bci_config_get_size(job->ex->config, "output_limit");
	struct bci_comms_packet p;
	char line[BCI_IGT_LINE_MAX];
	int n, ret;

	if (bci_comms_packet_decode(c->buf, (size_t)got, &p) < 0) {
		bad_datagram(job, got);
		return;
	}
	if (p.type == BCI_COMMS_LOG && c->log_bytes + (size_t)got > limit) {
		c->log_dropped += (size_t)got;
		return;
	}
	if (p.type == BCI_COMMS_LOG)
		c->log_bytes += (size_t)got;
	if (p.type != BCI_COMMS_EXEC)
		c->used = true;
	ret = bci_comms_record_write(c->file_fd, c->buf, (size_t)got);
	/* Whatever starts, ends or decides a test is durable before the journal line it makes. */
	if (ret == 0 && p.type != BCI_COMMS_LOG && p.type != BCI_COMMS_VERSION)
		ret = sync_comms(c);
	if (ret < 0)
		bci_warn("job %u: cannot write to comms: %s", job->index + 1, strerror(-ret));
	n = p.complete ? protocol_line(&p, line, sizeof(line)) : 0;
	if (n > 0 && (size_t)n < sizeof(line) && c->on_line)
		c->on_line(c->data, line, (size_t)n);
}

void bci_igt_comms_read(struct bci_igt_job *job, long now)
{
	struct bci_igt_comms *c = &job->comms;

	while (c->sock_fd >= 0) {
		ssize_t got = recv(c->sock_fd, c->buf, BCI_COMMS_MAX_PACKET, MSG_DONTWAIT);
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return;
		if (got < 0) {
			bci_warn("job %u: socket: %s", job->index + 1, strerror(errno));
			close(c->sock_fd);
			c->sock_fd = -1;
			return;
		}
		job->last_activity = now;
		handle_datagram(job, got);
	}
}

void bci_igt_comms_finish(struct bci_igt_job *job, long now)
{
	struct bci_igt_comms *c = &job->comms;
	char text[160], seconds[32];

	if (c->file_fd < 0)
		return;
	/* What the test sent before it went is still queued. */
	bci_igt_comms_read(job, now);
	if (c->used && c->log_dropped) {
		snprintf(text, sizeof(text),
			 "\nbootci: log packets over the output limit: %llu bytes dropped\n",
			 (unsigned long long)c->log_dropped);
		append_packet(job, &(struct bci_comms_packet){ .type = BCI_COMMS_LOG, .stream = 1,
							       .text = text }, false);
	}
	if (c->used && job->reaped) {
		if (job->timed_out)
			append_packet(job, &(struct bci_comms_packet){
					      .type = BCI_COMMS_RESULT_OVERRIDE, .result = "timeout" },
				      false);
		snprintf(seconds, sizeof(seconds), "%.3f", job->seconds);
		append_packet(job, &(struct bci_comms_packet){ .type = BCI_COMMS_EXIT,
							       .exit_status = job->status,
							       .time = seconds }, false);
	}
}

void bci_igt_comms_close(struct bci_igt_comms *c)
{
	if (c->sock_fd >= 0)
		close(c->sock_fd);
	if (c->child_fd >= 0)
		close(c->child_fd);
	if (c->file_fd >= 0)
		close(c->file_fd);
	free(c->buf);
	*c = (struct bci_igt_comms){ .sock_fd = -1, .child_fd = -1, .file_fd = -1, .synced = -1 };
}

/* ---- after a boot that died in a job (resume.c) ---- */

/* Job @index's comms, whole, when its test spoke the socket: 1; 0 when not (or unreadable). */
static int read_spoken_comms(struct bci_executor *ex, unsigned index, char **data, size_t *len)
{
	struct bci_comms_packet p;
	char path[PATH_MAX];
	size_t pos = 0;

	*data = NULL;
	if (bci_igt_rundir_path(ex, path, BCI_RESULTS_JOB_DIR "/" BCI_RESULTS_JOB_COMMS, index) < 0 ||
	    bci_read_file(path, data, len, 256 << 20) < 0)
		return 0;
	while (bci_comms_next(*data, *len, &pos, &p, NULL, 0) == 1)
		if (p.type != BCI_COMMS_EXEC)
			return 1;
	free(*data);
	*data = NULL;
	return 0;
}

int bci_igt_comms_protocol_text(struct bci_executor *ex, unsigned index, char **text, size_t *len)
{
	struct bci_comms_packet p;
	struct bci_str out = { 0 };
	char *data, line[BCI_IGT_LINE_MAX];
	size_t data_len, pos = 0;
	int n;

	if (!read_spoken_comms(ex, index, &data, &data_len))
		return 0;
	while (bci_comms_next(data, data_len, &pos, &p, NULL, 0) == 1) {
		n = p.complete ? protocol_line(&p, line, sizeof(line) - 1) : 0;
		if (n <= 0 || (size_t)n >= sizeof(line) - 1)
			continue;
		line[n++] = '\n';
		if (bci_str_append(&out, line, (size_t)n) < 0)
			break;
	}
	free(data);
	*text = bci_str_steal(&out);
	*len = *text ? strlen(*text) : 0;
	return *text ? 1 : 0;
}

/* Appends @len bytes of ordinary text as stdout log packets of IGT's size (4 KiB). */
static int mirror_text(int fd, const char *text, size_t len)
{
	char chunk[4097];
	int ret = 0;

	while (len > 0 && ret == 0) {
		size_t n = len < 4096 ? len : 4096;
		struct bci_comms_packet p = { .type = BCI_COMMS_LOG, .stream = 1, .text = chunk };
		char packet[4096 + 64];
		ssize_t size;

		memcpy(chunk, text, n);
		chunk[n] = '\0';
		size = bci_comms_packet_encode(&p, packet, sizeof(packet));
		ret = size < 0 ? (int)size : bci_comms_record_write(fd, packet, (size_t)size);
		text += n;
		len -= n;
	}
	return ret;
}

/* One protocol line (without newline) as its packet. */
static int mirror_line(int fd, const struct bci_igt_line *l)
{
	char name[BCI_IGT_LINE_MAX], word[64], packet[BCI_IGT_LINE_MAX + 128];
	struct bci_comms_packet p = { .name = name, .result = word, .time = "0.000" };
	size_t w = 0;
	ssize_t size;

	snprintf(name, sizeof(name), "%.*s", (int)l->name_len, l->name);
	while (w < l->text_len && w < sizeof(word) - 1 && l->text[w] != ' ')
		w++;
	snprintf(word, sizeof(word), "%.*s", (int)w, l->text ? l->text : "");
	switch (l->kind) {
	case BCI_IGT_LINE_SUBTEST_START: p.type = BCI_COMMS_SUBTEST_START; break;
	case BCI_IGT_LINE_DYNAMIC_START: p.type = BCI_COMMS_DYNAMIC_START; break;
	case BCI_IGT_LINE_SUBTEST_RESULT: p.type = BCI_COMMS_SUBTEST_RESULT; break;
	case BCI_IGT_LINE_DYNAMIC_RESULT: p.type = BCI_COMMS_DYNAMIC_RESULT; break;
	default: return 0;
	}
	size = bci_comms_packet_encode(&p, packet, sizeof(packet));
	if (size < 0 || (size_t)size > sizeof(packet))
		return -EINVAL;
	return bci_comms_record_write(fd, packet, (size_t)size);
}

void bci_igt_comms_mirror(struct bci_executor *ex, unsigned index, const char *out_path, off_t from)
{
	char path[PATH_MAX], *data = NULL, *text = NULL;
	size_t data_len, len = 0, plain = 0;
	int fd = -1, ret = 0;

	if (!read_spoken_comms(ex, index, &data, &data_len))
		return;
	if (bci_igt_rundir_path(ex, path, BCI_RESULTS_JOB_DIR "/" BCI_RESULTS_JOB_COMMS, index) < 0 ||
	    bci_read_file(out_path, &text, &len, 256 << 20) < 0 || (size_t)from > len)
		goto out;
	fd = open(path, O_WRONLY | O_APPEND | O_CLOEXEC);
	if (fd < 0 || ftruncate(fd, (off_t)bci_comms_valid_prefix(data, data_len)) < 0) {
		ret = -errno;
		goto out;
	}
	/* Ordinary text gathered into log packets, each protocol line its own packet. */
	for (size_t at = (size_t)from, end; at < len && ret == 0; at = end) {
		const char *nl = memchr(text + at, '\n', len - at);
		struct bci_igt_line l;

		end = nl ? (size_t)(nl - text) + 1 : len;
		if (bci_igt_line_parse(text + at, end - at, &l) == BCI_IGT_LINE_OTHER ||
		    l.kind == BCI_IGT_LINE_VERSION) {
			plain += end - at;
			continue;
		}
		ret = mirror_text(fd, text + at - plain, plain);
		plain = 0;
		if (ret == 0)
			ret = mirror_line(fd, &l);
	}
	if (ret == 0)
		ret = mirror_text(fd, text + len - plain, plain);
	if (ret == 0 && fdatasync(fd) < 0)
		ret = -errno;
out:
	if (ret < 0)
		bci_warn("job %u: cannot say the crash in its comms: %s", index + 1, strerror(-ret));
	if (fd >= 0)
		close(fd);
	free(data);
	free(text);
}
