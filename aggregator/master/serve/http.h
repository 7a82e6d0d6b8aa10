/* SPDX-License-Identifier: MIT */
/*
 * serve's request routing and header parsing: pure functions over the
 * method, the (decoded) URL path and header values, so that the fuzz target
 * and the unit tests reach them without a socket. Nothing here allocates.
 *
 * The API (bootci-aggregator-serve(1)):
 *   GET  /api/v1/health
 *   PUT  /api/v1/machines/<machine>/runs/<run-id>     upload (tar.zst)
 *   GET  /api/v1/machines/<machine>/runs/<run-id>     the run's state
 *   GET  /api/v1/machines/<machine>/runs/<run-id>/manifest   the stored archive's manifest
 *   GET  /api/v1/machines/<machine>/runs/<run-id>/results/<test>/{out,err,dmesg}
 *   PUT  /api/v1/machines/<machine>/fault             the machine cannot run its jobs (text)
 * <machine> and <run-id> are words, <test> an IGT test name (names.h:
 * bci_name_machine_ok(), bci_name_run_id_ok(), bci_name_test_ok()).
 */
#ifndef BCI_SERVE_HTTP_H
#define BCI_SERVE_HTTP_H

#include "manifest.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define BCI_HTTP_TEST_MAX   512
#define BCI_HTTP_TOKEN_MAX  256
/* The header carrying the archive's sha256 (64 hex digits) on a PUT. */
#define BCI_HTTP_SHA256_HEADER "X-Bootci-Sha256"

enum bci_route_kind {
	BCI_ROUTE_HEALTH,
	BCI_ROUTE_RUN,		/* PUT: upload; GET: state */
	BCI_ROUTE_RESULT,	/* GET: one test's out, err or dmesg */
	BCI_ROUTE_MANIFEST,	/* GET: the stored run's manifest.json */
	BCI_ROUTE_FAULT,	/* PUT: the machine's fault note (no run id) */
	BCI_ROUTE_HELLO,	/* PUT: its known-good image started (no run id, no body) */
};

struct bci_route {
	enum bci_route_kind kind;
	bool put;				/* the method is PUT (else GET or HEAD) */
	char machine[BCI_MANIFEST_WORD_MAX + 1];
	char run_id[BCI_MANIFEST_WORD_MAX + 1];
	char test[BCI_HTTP_TEST_MAX + 1];
	char stream[8];				/* "out", "err" or "dmesg" */
};

/*
 * Decodes the %XX of the NUL-terminated @s in place (libmicrohttpd's
 * unescaper, for the path and each query value): as libmicrohttpd does,
 * except %00, which becomes 0x01: a NUL would cut the name short and route
 * another name's page, while a control byte is refused by every name check
 * (names.h). Returns the decoded length.
 */
size_t bci_http_unescape(char *s);

/*
 * Routes @method and the decoded path @url. Returns 0 and fills @route, or
 * the HTTP status to answer (400 a bad machine, run id or test name, 404 no
 * such path, 405 a method the path does not take) with @err saying why.
 */
int bci_http_route(const char *method, const char *url, struct bci_route *route, char *err,
		   size_t err_size);

/*
 * "bytes START-END/TOTAL" (RFC 9110 Content-Range) with START <= END < TOTAL.
 * Returns 0 or -EINVAL (@err says why).
 */
int bci_http_content_range(const char *value, uint64_t *start, uint64_t *end, uint64_t *total,
			   char *err, size_t err_size);

/* "Bearer TOKEN" (scheme case-insensitive): copies TOKEN (visible ASCII, 1..256) into @token. */
int bci_http_bearer(const char *value, char token[BCI_HTTP_TOKEN_MAX + 1], char *err,
		    size_t err_size);

/* 64 hex digits (either case) into lowercase @hex. */
int bci_http_sha256(const char *value, char hex[BCI_SHA256_HEX_LEN + 1], char *err,
		    size_t err_size);

/* A decimal byte count (Content-Length) without sign, spaces or overflow. */
int bci_http_length(const char *value, uint64_t *length);

/*
 * What serve's gate (gate.c) reads of a request's head before it gives the
 * connection a slot: whether the head is complete, and the bearer token it
 * carries. The full parse is libmicrohttpd's, after.
 */
struct bci_http_head {
	bool has_token;				/* an Authorization: Bearer header that parsed */
	char token[BCI_HTTP_TOKEN_MAX + 1];
};

/*
 * Scans the first @len bytes a client sent: 0 while the head is incomplete
 * (no empty line yet), 1 when it is (@head filled from its header lines).
 */
int bci_http_head_scan(const char *buf, size_t len, struct bci_http_head *head);

#endif
