/* SPDX-License-Identifier: MIT */
/*
 * Error text for bootci-builder's library: functions return -errno and, when
 * given a struct builder_error, also leave a one-line message in it that the
 * caller's main() prints. Messages about spec input start with "SPECFILE:LINE: "
 * so editors and CI logs can jump straight to the offending line.
 */
#ifndef BUILDER_ERROR_H
#define BUILDER_ERROR_H

struct builder_error {
	char msg[1024];
};

/* printf-style; @err may be NULL (callers that only want the -errno). */
void builder_error_set(struct builder_error *err, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#endif
