// SPDX-License-Identifier: MIT
/*
 * DATA/mail.conf (mail.h, bootci-mail.conf(5)): `key = value` lines read
 * through lib/config.h's typed table, so a bad value is an error naming the
 * file's line, the key and the value.
 */
#include "mail.h"

#include "config.h"
#include "fsutil.h"
#include "message.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

static int url_check(const struct bci_config_key *key, const char *value, char *why,
		     size_t why_size)
{
	if (!*value || !strncmp(value, "smtp://", 7) || !strncmp(value, "smtps://", 8))
		return 0;
	bci_message(why, why_size, "%s: smtp://HOST[:PORT][/EHLO-NAME] or smtps://...", key->name);
	return -EINVAL;
}

static int address_check(const struct bci_config_key *key, const char *value, char *why,
			 size_t why_size)
{
	char address[512];

	if (!*value || bci_mail_address(value, address, sizeof(address)) == 0)
		return 0;
	bci_message(why, why_size, "%s: not an address (\"Name <user@host>\" or user@host)",
		    key->name);
	return -EINVAL;
}

static int absolute_check(const struct bci_config_key *key, const char *value, char *why,
			  size_t why_size)
{
	if (!*value || value[0] == '/')
		return 0;
	bci_message(why, why_size, "%s: an absolute path", key->name);
	return -EINVAL;
}

static const struct bci_config_key mail_keys[] = {
	{ "url", BCI_CONFIG_STRING, "", NULL, "the SMTP server (required)", url_check },
	{ "from", BCI_CONFIG_STRING, "", NULL, "the replies' From: and envelope sender (required)",
	  address_check },
	{ "to", BCI_CONFIG_STRING, "", NULL, "the list every reply goes to", address_check },
	{ "starttls", BCI_CONFIG_CHOICE, "off", "off|required", "smtp:// with STARTTLS", NULL },
	{ "auth-file", BCI_CONFIG_STRING, "", NULL, "the AUTH user and password's file",
	  absolute_check },
	{ "ca-file", BCI_CONFIG_STRING, "", NULL, "the CA certificates the server's is checked with",
	  absolute_check },
	{ "timeout", BCI_CONFIG_SECONDS, "60s", NULL, "one delivery's longest time", NULL },
	{ "interval", BCI_CONFIG_SECONDS, "30s", NULL, "serve's time between two passes", NULL },
	{ "retry-first", BCI_CONFIG_SECONDS, "1m", NULL, "the first retry's delay", NULL },
	{ "retry-max", BCI_CONFIG_SECONDS, "1h", NULL, "the longest delay between attempts", NULL },
	{ "retry-for", BCI_CONFIG_SECONDS, "48h", NULL, "how long a message is retried", NULL },
	{ "reply", BCI_CONFIG_CHOICE, "manual", "manual|final",
	  "serve queues a build's reply once its jobs have all ended", NULL },
	{ "matrix-url", BCI_CONFIG_STRING, "", NULL, "the base URL of the pages replies link", NULL },
	{ NULL, 0, NULL, NULL, NULL, NULL },
};

static char *dup_or_null(const char *s)
{
	return s && *s ? strdup(s) : NULL;
}

int bci_mail_config_read(const char *path, struct bci_mail_config *c, char *err, size_t err_size)
{
	struct bci_config *config = NULL;
	char address[512], *text = NULL;
	size_t len;
	int ret;

	memset(c, 0, sizeof(*c));
	ret = bci_read_file(path, &text, &len, 64 * 1024);
	if (ret < 0) {
		bci_message(err, err_size, "%s: %s", path, strerror(-ret));
		return ret;
	}
	ret = bci_config_new(mail_keys, &config);
	if (ret < 0)
		goto out;
	ret = bci_config_parse_file(config, path, text, len, err, err_size);
	if (ret < 0)
		goto out;
	if (!*bci_config_get(config, "url") || !*bci_config_get(config, "from")) {
		bci_message(err, err_size, "%s: url and from are required", path);
		ret = -EINVAL;
		goto out;
	}
	if (!strncmp(bci_config_get(config, "url"), "smtps://", 8) &&
	    !strcmp(bci_config_get(config, "starttls"), "required")) {
		bci_message(err, err_size, "%s: starttls is for smtp:// (smtps:// is TLS from the"
			    " start)", path);
		ret = -EINVAL;
		goto out;
	}
	bci_mail_address(bci_config_get(config, "from"), address, sizeof(address));
	c->url = strdup(bci_config_get(config, "url"));
	c->from = strdup(bci_config_get(config, "from"));
	c->sender = strdup(address);
	c->to = dup_or_null(bci_config_get(config, "to"));
	c->auth_file = dup_or_null(bci_config_get(config, "auth-file"));
	c->ca_file = dup_or_null(bci_config_get(config, "ca-file"));
	c->starttls = !strcmp(bci_config_get(config, "starttls"), "required");
	c->timeout = bci_config_get_seconds(config, "timeout");
	c->interval = bci_config_get_seconds(config, "interval");
	c->retry_first = bci_config_get_seconds(config, "retry-first");
	c->retry_max = bci_config_get_seconds(config, "retry-max");
	c->retry_for = bci_config_get_seconds(config, "retry-for");
	c->reply_final = !strcmp(bci_config_get(config, "reply"), "final");
	c->matrix_url = dup_or_null(bci_config_get(config, "matrix-url"));
	if (!c->url || !c->from || !c->sender ||
	    (*bci_config_get(config, "to") && !c->to) ||
	    (*bci_config_get(config, "auth-file") && !c->auth_file) ||
	    (*bci_config_get(config, "ca-file") && !c->ca_file) ||
	    (*bci_config_get(config, "matrix-url") && !c->matrix_url))
		ret = -ENOMEM;
out:
	if (ret == -ENOMEM)
		bci_message(err, err_size, "%s: %s", path, strerror(ENOMEM));
	if (ret < 0)
		bci_mail_config_free(c);
	bci_config_free(config);
	free(text);
	return ret;
}

int bci_mail_config_load(const char *data_dir, struct bci_mail_config *c, char *err,
			 size_t err_size)
{
	char path[PATH_MAX];

	if (snprintf(path, sizeof(path), "%s/%s", data_dir, BCI_MAIL_CONFIG_FILE) >= (int)sizeof(path)) {
		bci_message(err, err_size, "%s: %s", data_dir, strerror(ENAMETOOLONG));
		return -ENAMETOOLONG;
	}
	return bci_mail_config_read(path, c, err, err_size);
}

void bci_mail_config_free(struct bci_mail_config *c)
{
	free(c->url);
	free(c->from);
	free(c->sender);
	free(c->to);
	free(c->auth_file);
	free(c->ca_file);
	free(c->matrix_url);
	memset(c, 0, sizeof(*c));
}
