// SPDX-License-Identifier: MIT
/*
 * aggregator/lazy/: libcurl, libpq, libmicrohttpd and libarchive loaded on
 * first use. Every function a shim file defines is found in its library; the
 * shims reach the library with their arguments intact (the variadic ones
 * too); a library or function that is not there is named, and ends the
 * process with 127 as the dynamic loader would.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "../../aggregator/lazy/lazy.h"

#include <archive.h>
#include <curl/curl.h>
#include <libpq-fe.h>
#include <microhttpd.h>

static const struct bci_lazy_table *const tables[] = {
	&bci_lazy_curl, &bci_lazy_pq, &bci_lazy_mhd, &bci_lazy_archive,
};

static void test_every_function_found(void **state)
{
	char err[512];

	(void)state;
	for (size_t t = 0; t < sizeof(tables) / sizeof(tables[0]); t++) {
		assert_true(tables[t]->count > 0);
		for (size_t i = 0; i < tables[t]->count; i++) {
			err[0] = '\0';
			if (!bci_lazy_find(tables[t]->lib, tables[t]->names[i], err, sizeof(err)))
				fail_msg("%s: %s", tables[t]->names[i], err);
		}
	}
}

static struct bci_lazy_lib missing = { .soname = "libbootci-missing.so.0",
				       .package = "bootci-missing" };

static void test_missing_named(void **state)
{
	char err[512] = "";

	(void)state;
	assert_null(bci_lazy_find(&missing, "anything", err, sizeof(err)));
	assert_non_null(strstr(err, "libbootci-missing.so.0 (Debian package bootci-missing): "));
	assert_non_null(strstr(err, "cannot open shared object file"));
	assert_null(missing.handle);
	/* A function the library does not have. */
	assert_null(bci_lazy_find(bci_lazy_curl.lib, "curl_no_such_function", err, sizeof(err)));
	assert_non_null(strstr(err, "libcurl.so.4 (Debian package libcurl4): no function "
				    "curl_no_such_function"));
}

/* bci_lazy_sym() for a missing library: its name on stderr, and exit status 127. */
static void test_missing_ends_127(void **state)
{
	char out[512] = "";
	ssize_t n;
	int fds[2], status;
	pid_t pid;

	(void)state;
	assert_int_equal(pipe(fds), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		dup2(fds[1], STDERR_FILENO);
		bci_lazy_sym(&missing, "anything");
		_exit(0); /* not reached */
	}
	close(fds[1]);
	n = read(fds[0], out, sizeof(out) - 1);
	close(fds[0]);
	assert_true(n > 0);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 127);
	assert_non_null(strstr(out, "bootci-aggregator: cannot load libbootci-missing.so.0"));
}

static size_t discard(char *data, size_t size, size_t count, void *user)
{
	(void)data;
	(void)user;
	return size * count;
}

/* Each kind of curl_easy_setopt argument goes through: curl refuses what it does not take. */
static void test_curl_arguments(void **state)
{
	CURL *curl;
	long code = -1;

	(void)state;
	assert_string_equal(curl_easy_strerror(CURLE_OK), "No error");
	curl = curl_easy_init();
	assert_non_null(curl);
	assert_int_equal(curl_easy_setopt(curl, CURLOPT_URL, "http://127.0.0.1:1/"), CURLE_OK);
	assert_int_equal(curl_easy_setopt(curl, CURLOPT_TIMEOUT, 5L), CURLE_OK);
	/* A long out of range: curl saw the number, not a pointer's bits. */
	assert_int_equal(curl_easy_setopt(curl, CURLOPT_TIMEOUT, -1L),
			 CURLE_BAD_FUNCTION_ARGUMENT);
	assert_int_equal(curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, discard), CURLE_OK);
	assert_int_equal(curl_easy_setopt(curl, CURLOPT_MAXFILESIZE_LARGE, (curl_off_t)1 << 40),
			 CURLE_OK);
	assert_int_equal(curl_easy_setopt(curl, CURLOPT_MAXFILESIZE_LARGE, (curl_off_t)-1),
			 CURLE_BAD_FUNCTION_ARGUMENT);
	assert_int_equal(curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &code), CURLE_OK);
	assert_int_equal(code, 0);
	curl_easy_cleanup(curl);
}

static enum MHD_Result no_answer(void *cls, struct MHD_Connection *connection, const char *url,
				 const char *method, const char *version, const char *data,
				 size_t *size, void **request)
{
	(void)cls, (void)connection, (void)url, (void)method, (void)version, (void)data;
	(void)size, (void)request;
	return MHD_NO;
}

/*
 * The daemon's options (a variadic list: the loopback address it binds, which
 * it would not if the list were read wrong) and its bound port (a variadic
 * getter).
 */
static void test_mhd_arguments(void **state)
{
	struct sockaddr_in loopback = { .sin_family = AF_INET,
					.sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	const union MHD_DaemonInfo *info;
	struct MHD_Daemon *daemon;
	struct sockaddr_in bound;
	socklen_t len = sizeof(bound);

	(void)state;
	daemon = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD, 0, NULL, NULL, no_answer, NULL,
				  MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&loopback,
				  MHD_OPTION_CONNECTION_LIMIT, (unsigned int)4, MHD_OPTION_END);
	assert_non_null(daemon);
	info = MHD_get_daemon_info(daemon, MHD_DAEMON_INFO_BIND_PORT);
	assert_non_null(info);
	assert_true(info->port > 0);
	info = MHD_get_daemon_info(daemon, MHD_DAEMON_INFO_LISTEN_FD);
	assert_non_null(info);
	assert_int_equal(getsockname(info->listen_fd, (struct sockaddr *)&bound, &len), 0);
	assert_int_equal(bound.sin_addr.s_addr, htonl(INADDR_LOOPBACK));
	MHD_stop_daemon(daemon);
}

static void test_pq_and_archive(void **state)
{
	struct archive *a;
	PGconn *conn;

	(void)state;
	/* No server there: libpq says so, through the shims. */
	conn = PQconnectdb("host=/nonexistent/bootci connect_timeout=1");
	assert_non_null(conn);
	assert_int_equal(PQstatus(conn), CONNECTION_BAD);
	assert_non_null(strstr(PQerrorMessage(conn), "/nonexistent/bootci"));
	PQfinish(conn);
	a = archive_read_new();
	assert_non_null(a);
	assert_int_equal(archive_read_support_format_tar(a), ARCHIVE_OK);
	assert_int_equal(archive_read_open_memory(a, "not a tar", 9), ARCHIVE_FATAL);
	assert_non_null(archive_error_string(a));
	assert_int_equal(archive_read_free(a), ARCHIVE_OK);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_function_found),
		cmocka_unit_test(test_missing_named),
		cmocka_unit_test(test_missing_ends_127),
		cmocka_unit_test(test_curl_arguments),
		cmocka_unit_test(test_mhd_arguments),
		cmocka_unit_test(test_pq_and_archive),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
