// SPDX-License-Identifier: MIT
/*
 * A project being followed (patchwork.h, "project.c"): its client opened and
 * closed, its log lines, its build names; what poll.c and check.c share.
 */
#include "patchwork.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>

void bci_patchwork_say(struct bci_patchwork *pw, const char *fmt, ...)
{
	va_list ap;

	if (!pw->log)
		return;
	fprintf(pw->log, "patchwork %s: ", pw->project->name);
	va_start(ap, fmt);
	vfprintf(pw->log, fmt, ap);
	va_end(ap);
	fputc('\n', pw->log);
	fflush(pw->log);
}

int bci_patchwork_open(struct bci_patchwork *pw, const struct bci_patchwork_project *project,
		       struct bci_store *store, const char *data_dir, FILE *log, char *err,
		       size_t err_size)
{
	*pw = (struct bci_patchwork){ .project = project, .store = store, .data_dir = data_dir,
				      .log = log };
	return bci_patchwork_client_new(project, &pw->client, err, err_size);
}

void bci_patchwork_close(struct bci_patchwork *pw)
{
	bci_patchwork_client_free(pw->client);
	pw->client = NULL;
}

int bci_patchwork_build_name(const struct bci_patchwork_project *project, int64_t series,
			     char *out, size_t size)
{
	if ((size_t)snprintf(out, size, "pw-%s-%lld", project->name, (long long)series) >= size)
		return -ENAMETOOLONG;
	return 0;
}
