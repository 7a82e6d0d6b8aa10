// SPDX-License-Identifier: MIT
/*
 * A machine's fault note (internal.h): PUT /api/v1/machines/<machine>/fault
 * with the machine's token and one line of text, sent by its known-good
 * image's collect when the machine cannot run its jobs (boots in a row that
 * ended before their run began: bootci-collect(8)). The scheduler takes the
 * machine out with the note as the reason (`schedule machines` shows it)
 * until a person puts it back; without a scheduler the note is only logged.
 *
 * And PUT /api/v1/machines/<machine>/hello, the same token, no body: the
 * machine's collect says at every start that its known-good image booted
 * (schedule.h, bci_schedule_hello(): the runs the master ended are then not
 * blamed on the disk, even when the kernel died before making a run folder),
 * and the answer tells it whether the machine is in the schedule.
 */
#include "internal.h"
#include "../schedule/serve_hook.h"
#include "jsonw.h"

#include <errno.h>
#include <microhttpd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The headers: the token, a body that fits. */
enum MHD_Result serve_fault_begin(struct MHD_Connection *connection, struct request *r)
{
	bool answered;

	if (serve_authenticate(connection, r, &answered) < 0)
		return answered ? MHD_YES : MHD_NO;
	if (r->announced != UINT64_MAX && r->announced > BCI_SERVE_FAULT_MAX)
		return serve_respond_error(connection, r, MHD_HTTP_CONTENT_TOO_LARGE,
					   "a fault note of %llu bytes (at most %d, one line)",
					   (unsigned long long)r->announced, BCI_SERVE_FAULT_MAX);
	return MHD_YES;
}

/* Why @note (@len bytes) is no fault note, or NULL: one line of text, not empty. */
static const char *note_refused(const char *note, size_t len)
{
	if (!len)
		return "an empty fault note";
	for (size_t i = 0; i < len; i++)
		if ((unsigned char)note[i] < 0x20 || note[i] == 0x7f)
			return "a fault note is one line of text (a control character in it)";
	return NULL;
}

enum MHD_Result serve_fault_step(struct MHD_Connection *connection, struct request *r,
				 const char *data, size_t *data_size)
{
	struct bci_server *s = r->server;
	struct json_answer j;
	const char *refused;
	char why[512] = "";
	int out = 0;

	if (*data_size) {
		if (r->fault_len + *data_size > BCI_SERVE_FAULT_MAX) {
			*data_size = 0;
			return serve_refuse_later(r, MHD_HTTP_CONTENT_TOO_LARGE,
						  "a fault note of more than %d bytes (one line)",
						  BCI_SERVE_FAULT_MAX);
		}
		memcpy(r->fault + r->fault_len, data, *data_size);
		r->fault_len += *data_size;
		r->written += *data_size;
		*data_size = 0;
		return MHD_YES;
	}
	/* A final newline is the line's end, not part of it. */
	while (r->fault_len && (r->fault[r->fault_len - 1] == '\n' || r->fault[r->fault_len - 1] == '\r'))
		r->fault_len--;
	r->fault[r->fault_len] = '\0';
	refused = note_refused(r->fault, r->fault_len);
	if (refused)
		return serve_respond_error(connection, r, MHD_HTTP_BAD_REQUEST, "%s", refused);
	if (s->schedule)
		out = bci_schedule_server_fault(s->schedule, r->route.machine, r->fault, why,
						sizeof(why));
	if (out < 0 && out != -ENOENT)
		return serve_respond_error(connection, r, MHD_HTTP_INTERNAL_SERVER_ERROR, "%s", why);
	snprintf(r->note, sizeof(r->note), "fault note: %s: %s", r->fault,
		 !s->schedule ? "no scheduler, logged only" :
		 out == -ENOENT ? "not in the inventory, logged only" :
		 out ? "taken out of the schedule" : "already out of the schedule");
	if (serve_json_begin(&j) < 0)
		return MHD_NO;
	bci_jsonw_key(&j.w, "machine");
	bci_jsonw_string(&j.w, r->route.machine);
	bci_jsonw_key(&j.w, "note");
	bci_jsonw_string(&j.w, r->fault);
	bci_jsonw_key(&j.w, "out");
	bci_jsonw_bool(&j.w, s->schedule && out >= 0);
	return serve_json_respond(connection, r, MHD_HTTP_OK, &j);
}

enum MHD_Result serve_hello_step(struct MHD_Connection *connection, struct request *r,
				 const char *data, size_t *data_size)
{
	struct bci_server *s = r->server;
	struct bci_schedule_hello hello = { .known = false };
	struct json_answer j;
	char why[512] = "";
	int ret = 0;

	(void)data;
	if (*data_size) {
		r->written += *data_size;
		*data_size = 0;
		if (r->written > BCI_SERVE_FAULT_MAX)
			return serve_refuse_later(r, MHD_HTTP_CONTENT_TOO_LARGE,
						  "a hello has no body");
		return MHD_YES;
	}
	if (s->schedule)
		ret = bci_schedule_server_hello(s->schedule, r->route.machine, &hello, why,
						sizeof(why));
	if (ret < 0 && ret != -ENOENT)
		return serve_respond_error(connection, r, MHD_HTTP_INTERNAL_SERVER_ERROR, "%s", why);
	snprintf(r->note, sizeof(r->note), "hello: %s", !s->schedule ? "no scheduler" :
		 ret == -ENOENT ? "not in the inventory" : hello.out ? "out of the schedule" :
		 "in the schedule");
	if (serve_json_begin(&j) < 0)
		return MHD_NO;
	bci_jsonw_key(&j.w, "machine");
	bci_jsonw_string(&j.w, r->route.machine);
	bci_jsonw_key(&j.w, "state");
	bci_jsonw_string(&j.w, !s->schedule || ret == -ENOENT ? "unscheduled" :
			 hello.out ? "out" : "ready");
	bci_jsonw_key(&j.w, "note");
	bci_jsonw_string(&j.w, hello.note);
	bci_jsonw_key(&j.w, "ended_runs");
	bci_jsonw_int(&j.w, hello.ended_runs);
	return serve_json_respond(connection, r, MHD_HTTP_OK, &j);
}
