// SPDX-License-Identifier: MIT
/*
 * collect's configuration (/etc/bootci/collect.conf in the known-good image,
 * then `bootci_collect.<key>=<value>` on the kernel command line, then the
 * command line's options) and the machine file on the results partition.
 * The prefix is not `bootci.`: the executor, PID 1 of the same image, reads
 * those and refuses keys it does not know.
 */
#include "collect.h"

#include "message.h"

#include "config.h"
#include "fsutil.h"
#include "manifest.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

const struct bci_config_key bci_collect_keys[] = {
	{ "master", BCI_CONFIG_STRING, "", NULL,
	  "the CI master's base URL (http://host:port or https://...); empty: nothing is uploaded", NULL },
	{ "ca_file", BCI_CONFIG_STRING, "", NULL,
	  "CA certificates (PEM) an https master's certificate is checked against; empty: Debian's bundle, /etc/ssl/certs/ca-certificates.crt", NULL },
	{ "results", BCI_CONFIG_WORD, "/results", NULL,
	  "where the results partition is mounted (the executor mounts it there)", NULL },
	{ "machine_file", BCI_CONFIG_WORD, BCI_COLLECT_MACHINE_FILE, NULL,
	  "the machine's identity and token, relative to the results folder; mode 0600", NULL },
	{ "keep", BCI_CONFIG_NUMBER, "0", NULL,
	  "uploaded runs kept on the partition (the newest ones); older ones are deleted", NULL },
	{ "deadline", BCI_CONFIG_SECONDS, "10m", NULL,
	  "no upload attempt starts after this long; what is left stays for the next boot", NULL },
	{ "exclude", BCI_CONFIG_LIST, "known-good", NULL,
	  "run ids never uploaded (the known-good image's own run folder)", NULL },
	{ "console", BCI_CONFIG_STRING, "", NULL,
	  "where progress lines go (/dev/console in the image); empty: standard error", NULL },
	{ "max_rate", BCI_CONFIG_SIZE, "0", NULL,
	  "bytes per second an upload may use (N, NK, NM), so a fleet does not flood its master; 0: no limit", NULL },
	{ "efi", BCI_CONFIG_CHOICE, "yes", "yes|no",
	  "read the firmware's boot entries into the manifest (efivarfs)", NULL },
	{ "root", BCI_CONFIG_STRING, "", NULL,
	  "the tree the EFI variables are read under (ROOT/sys/firmware/efi/efivars); empty: this machine's", NULL },
	{ NULL, 0, NULL, NULL, NULL, NULL },
};

static const struct bci_config_key machine_keys[] = {
	{ "machine", BCI_CONFIG_STRING, "", NULL, "the machine's name at the master", NULL },
	{ "token", BCI_CONFIG_STRING, "", NULL, "its secret upload token", NULL },
	{ "master", BCI_CONFIG_STRING, "", NULL, "the master it was enrolled with (optional)", NULL },
	{ "ca_file", BCI_CONFIG_STRING, "", NULL,
	  "the CA file that master's certificate is checked against (optional)", NULL },
	{ "keep", BCI_CONFIG_STRING, "", NULL, "collect's keep for this machine (optional)", NULL },
	{ "deadline", BCI_CONFIG_STRING, "", NULL, "collect's deadline for this machine (optional)", NULL },
	{ NULL, 0, NULL, NULL, NULL, NULL },
};

int bci_collect_path(char *buf, size_t size, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, size, fmt, ap);
	va_end(ap);
	return n < 0 || (size_t)n >= size ? -ENAMETOOLONG : 0;
}

int bci_collect_machine_read(const char *path, struct bci_collect_machine *machine, char *err,
			     size_t err_size)
{
	struct bci_config *config = NULL;
	char *text = NULL;
	struct stat st;
	size_t len = 0;
	int ret;

	if (stat(path, &st) < 0) {
		ret = -errno;
		bci_message(err, err_size, "%s: %s (written when the machine is provisioned)", path,
			 strerror(errno));
		return ret;
	}
	if (st.st_mode & 077) {
		bci_message(err, err_size, "%s: mode %04o: the token file must be readable by its owner only (0600)",
			 path, (unsigned)(st.st_mode & 07777));
		return -EPERM;
	}
	ret = bci_read_file(path, &text, &len, 64 * 1024);
	if (ret < 0) {
		bci_message(err, err_size, "%s: %s", path, strerror(-ret));
		return ret;
	}
	ret = bci_config_new(machine_keys, &config);
	if (ret < 0)
		goto out;
	ret = bci_config_parse_file(config, path, text, len, err, err_size);
	if (ret < 0)
		goto out;
	const char *name = bci_config_get(config, "machine"), *token = bci_config_get(config, "token");
	if (!*name || !*token) {
		bci_message(err, err_size, "%s: '%s' is missing", path, *name ? "token" : "machine");
		ret = -EINVAL;
		goto out;
	}
	if (!bci_manifest_word_ok(name) || strlen(name) >= sizeof(machine->name)) {
		bci_message(err, err_size, "%s: machine '%s': only letters, digits, '.', '_' and '-' (up to %zu)",
			 path, name, sizeof(machine->name) - 1);
		ret = -EINVAL;
		goto out;
	}
	if (strpbrk(token, " \t")) {
		bci_message(err, err_size, "%s: token: white space in it", path);
		ret = -EINVAL;
		goto out;
	}
	if (strlen(token) >= sizeof(machine->token)) {
		bci_message(err, err_size, "%s: token longer than %zu characters", path,
			 sizeof(machine->token) - 1);
		ret = -EINVAL;
		goto out;
	}
	if (strlen(bci_config_get(config, "master")) >= sizeof(machine->master) ||
	    strlen(bci_config_get(config, "ca_file")) >= sizeof(machine->ca_file) ||
	    strlen(bci_config_get(config, "keep")) >= sizeof(machine->keep) ||
	    strlen(bci_config_get(config, "deadline")) >= sizeof(machine->deadline)) {
		bci_message(err, err_size, "%s: master, ca_file, keep or deadline too long", path);
		ret = -EINVAL;
		goto out;
	}
	snprintf(machine->master, sizeof(machine->master), "%s", bci_config_get(config, "master"));
	snprintf(machine->ca_file, sizeof(machine->ca_file), "%s", bci_config_get(config, "ca_file"));
	snprintf(machine->keep, sizeof(machine->keep), "%s", bci_config_get(config, "keep"));
	snprintf(machine->deadline, sizeof(machine->deadline), "%s",
		 bci_config_get(config, "deadline"));
	snprintf(machine->name, sizeof(machine->name), "%s", name);
	snprintf(machine->token, sizeof(machine->token), "%s", token);
out:
	bci_config_free(config);
	if (text)
		explicit_bzero(text, len);
	free(text);
	return ret;
}
