// SPDX-License-Identifier: MIT
/*
 * One delivery through libcurl (mail.h): EHLO with the URL's path as the
 * name, STARTTLS when required, AUTH with the auth file's user and
 * password, MAIL FROM, RCPT TO each recipient, DATA with the message
 * (libcurl doubles a line's leading dot and ends it with CRLF.CRLF).
 *
 * The server's answers come through the debug callback: the last one is
 * what @why says, so a 550's own text reaches the log and `mail list`.
 * curl_easy_perform() returns on the 250 to DATA with the connection still
 * open (QUIT goes when the handle is cleaned up, a round trip later): the
 * caller's @accepted marks the message sent before that (mail.h's "sent
 * once").
 */
#include "mail.h"

#include "config.h"
#include "fsutil.h"
#include "message.h"

#include <curl/curl.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

struct upload {
	const char *p;
	size_t left;
};

static size_t upload_read(char *buf, size_t size, size_t nmemb, void *ctx)
{
	struct upload *u = ctx;
	size_t n = size * nmemb < u->left ? size * nmemb : u->left;

	memcpy(buf, u->p, n);
	u->p += n;
	u->left -= n;
	return n;
}

/* The server's last answer line, kept for @why. */
struct answers {
	char last[512];
};

static int debug_seen(CURL *curl, curl_infotype type, char *data, size_t size, void *ctx)
{
	struct answers *a = ctx;
	size_t n = size;

	(void)curl;
	if (type != CURLINFO_HEADER_IN)
		return 0;
	while (n && (data[n - 1] == '\n' || data[n - 1] == '\r'))
		n--;
	if (n >= sizeof(a->last))
		n = sizeof(a->last) - 1;
	memcpy(a->last, data, n);
	a->last[n] = '\0';
	/* Only printable text reaches a log line. */
	for (char *p = a->last; *p; p++)
		if ((unsigned char)*p < 0x20 || (unsigned char)*p > 0x7e)
			*p = '?';
	return 0;
}

/* libcurl's progress callback: non-zero abandons the transfer (serve stopping). */
static int stop_asked(void *ctx, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal,
		      curl_off_t ulnow)
{
	const atomic_bool *stop = ctx;

	(void)dltotal, (void)dlnow, (void)ultotal, (void)ulnow;
	return atomic_load(stop) ? 1 : 0;
}

struct credentials {
	char *user, *password;
	const char *path;
	char *err;
	size_t err_size;
};

static int credential_entry(const char *key, const char *value, unsigned int line, void *ctx)
{
	struct credentials *c = ctx;
	char **slot = !strcmp(key, "user") ? &c->user : !strcmp(key, "password") ? &c->password : NULL;

	if (!slot || *slot) {
		bci_message(c->err, c->err_size, "%s:%u: '%s': %s", c->path, line, key,
			    slot ? "given twice" : "not a key (user, password)");
		return -EINVAL;
	}
	*slot = strdup(value);
	return *slot ? 0 : -ENOMEM;
}

static void credentials_free(struct credentials *c)
{
	if (c->password)
		explicit_bzero(c->password, strlen(c->password));
	free(c->password);
	free(c->user);
}

/* The auth file's user and password (both required). */
static int credentials_read(const char *path, struct credentials *c, char *err, size_t err_size)
{
	size_t len;
	char *text;
	int ret;

	*c = (struct credentials){ .path = path, .err = err, .err_size = err_size };
	ret = bci_read_file(path, &text, &len, 16 * 1024);
	if (ret < 0) {
		bci_message(err, err_size, "auth file %s: %s", path, strerror(-ret));
		return ret;
	}
	ret = bci_kv_parse(path, text, len, credential_entry, c, err, err_size);
	explicit_bzero(text, len);
	free(text);
	if (ret == 0 && (!c->user || !c->password)) {
		bci_message(err, err_size, "auth file %s: needs user = ... and password = ...", path);
		ret = -EINVAL;
	}
	if (ret < 0)
		credentials_free(c);
	return ret;
}

int bci_smtp_send(const struct bci_mail_config *config, const char *sender,
		  const char *recipients, const char *message, size_t len,
		  void (*accepted)(void *ctx), void *ctx, const atomic_bool *stop, char *why,
		  size_t why_size)
{
	struct upload upload = { message, len };
	struct credentials credentials = { 0 };
	struct curl_slist *rcpt = NULL;
	char from[600], curl_error[CURL_ERROR_SIZE] = "";
	struct answers answers = { "" };
	long code = 0;
	CURLcode rc;
	CURL *curl;
	int ret;

	if (config->auth_file &&
	    (ret = credentials_read(config->auth_file, &credentials, why, why_size)) < 0)
		return ret;
	for (const char *p = recipients; *p;) {
		size_t n = strcspn(p, "\n");
		char address[512];
		struct curl_slist *more;

		if (n && n < sizeof(address)) {
			memcpy(address, p, n);
			address[n] = '\0';
			more = curl_slist_append(rcpt, address);
			if (!more) {
				ret = -ENOMEM;
				goto out;
			}
			rcpt = more;
		}
		p += n + (p[n] == '\n');
	}
	curl = curl_easy_init();
	if (!curl) {
		ret = -ENOMEM;
		goto out;
	}
	snprintf(from, sizeof(from), "<%s>", sender);
	curl_easy_setopt(curl, CURLOPT_URL, config->url);
	curl_easy_setopt(curl, CURLOPT_MAIL_FROM, from);
	curl_easy_setopt(curl, CURLOPT_MAIL_RCPT, rcpt);
	curl_easy_setopt(curl, CURLOPT_UPLOAD, 1L);
	curl_easy_setopt(curl, CURLOPT_INFILESIZE_LARGE, (curl_off_t)len);
	curl_easy_setopt(curl, CURLOPT_READFUNCTION, upload_read);
	curl_easy_setopt(curl, CURLOPT_READDATA, &upload);
	curl_easy_setopt(curl, CURLOPT_TIMEOUT, (long)config->timeout);
	curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT, (long)config->timeout);
	curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, curl_error);
	curl_easy_setopt(curl, CURLOPT_PROTOCOLS_STR, "smtp,smtps");
	curl_easy_setopt(curl, CURLOPT_DEBUGFUNCTION, debug_seen);
	curl_easy_setopt(curl, CURLOPT_DEBUGDATA, &answers);
	curl_easy_setopt(curl, CURLOPT_VERBOSE, 1L);
	if (stop) {
		curl_easy_setopt(curl, CURLOPT_XFERINFOFUNCTION, stop_asked);
		curl_easy_setopt(curl, CURLOPT_XFERINFODATA, (void *)stop);
		curl_easy_setopt(curl, CURLOPT_NOPROGRESS, 0L);
	}
	if (config->starttls)
		curl_easy_setopt(curl, CURLOPT_USE_SSL, (long)CURLUSESSL_ALL);
	if (config->ca_file)
		curl_easy_setopt(curl, CURLOPT_CAINFO, config->ca_file);
	if (credentials.user) {
		curl_easy_setopt(curl, CURLOPT_USERNAME, credentials.user);
		curl_easy_setopt(curl, CURLOPT_PASSWORD, credentials.password);
	}
	rc = curl_easy_perform(curl);
	if (rc == CURLE_OK && accepted)
		accepted(ctx);
	curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &code);
	curl_easy_cleanup(curl);
	if (rc == CURLE_OK) {
		ret = BCI_SMTP_SENT;
		goto out;
	}
	/*
	 * A 5xx is the server's last word on this message; anything else may pass
	 * later. So may credentials refused (535): they are the lab's to mend (the
	 * auth file), not the message's fault.
	 */
	ret = code >= 500 && code < 600 && rc != CURLE_LOGIN_DENIED ? BCI_SMTP_REFUSED
								     : BCI_SMTP_LATER;
	if (answers.last[0] && code >= 400)
		bci_message(why, why_size, "%s", answers.last);
	else
		bci_message(why, why_size, "%s%s%s", curl_easy_strerror(rc), curl_error[0] ? ": " : "",
			    curl_error);
out:
	curl_slist_free_all(rcpt);
	credentials_free(&credentials);
	return ret;
}
