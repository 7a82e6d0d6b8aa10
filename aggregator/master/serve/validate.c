// SPDX-License-Identifier: MIT
/* serve's check of an upload (validate.h): the run archive's reader and rules, and the URL's run. */
#include "validate.h"

#include "manifest.h"
#include "message.h"

#include <errno.h>
#include <string.h>

/* @r as bci_run_archive_open_*() left it (@ret): the URL's run, then every file read and checked. */
static int validate(struct bci_run_archive *r, int ret, const char *machine, const char *run_id,
		    char *err, size_t err_size)
{
	const struct bci_manifest_file *file;
	const struct bci_manifest *m;

	if (ret < 0)
		return ret;
	m = bci_run_archive_manifest(r);
	if (strcmp(m->machine, machine)) {
		bci_message(err, err_size, BCI_MANIFEST_NAME ": machine '%s', but uploaded as '%s'",
			    m->machine, machine);
		ret = -EINVAL;
	} else if (strcmp(m->run_id, run_id)) {
		bci_message(err, err_size, BCI_MANIFEST_NAME ": run_id '%s', but uploaded as '%s'",
			    m->run_id, run_id);
		ret = -EINVAL;
	} else {
		while ((ret = bci_run_archive_next(r, &file)) == 1)
			;
	}
	bci_run_archive_close(r);
	return ret;
}

int bci_archive_validate_fd(int fd, const struct bci_run_archive_limits *limits,
			    const char *machine, const char *run_id, char *err, size_t err_size)
{
	struct bci_run_archive *r;
	int ret = bci_run_archive_open_fd(fd, limits, &r, err, err_size);

	return validate(r, ret, machine, run_id, err, err_size);
}

int bci_archive_validate_memory(const void *data, size_t size,
				const struct bci_run_archive_limits *limits, const char *machine,
				const char *run_id, char *err, size_t err_size)
{
	struct bci_run_archive *r;
	int ret = bci_run_archive_open_memory(data, size, limits, &r, err, err_size);

	return validate(r, ret, machine, run_id, err, err_size);
}
