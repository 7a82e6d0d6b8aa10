// SPDX-License-Identifier: MIT
/* libcurl, loaded when first called (lazy.h): collect's upload and publish's client. */
#define CURL_DISABLE_TYPECHECK /* the shims below define the functions its macros would wrap */
#include "lazy.h"

#include "dlopen_note.h"

#include <curl/curl.h>
#include <stdarg.h>

#define SONAME "libcurl.so.4"

static struct bci_lazy_lib lib = { .soname = SONAME, .package = "libcurl4" };
/* Images that carry the aggregator (the known-good image) carry libcurl for collect. */
BCI_DLOPEN_NOTE(dlopen_note, "[{\"soname\":[\"" SONAME "\"],\"feature\":\"upload\",\"description\":\"collect's upload, publish's client\",\"priority\":\"recommended\"}]");

#define CURL_FUNCTIONS(FN, VOID)                                                          \
	FN(CURLcode, curl_global_init, (long flags), (flags))                             \
	VOID(curl_global_cleanup, (void), ())                                              \
	FN(CURL *, curl_easy_init, (void), ())                                            \
	FN(CURLcode, curl_easy_perform, (CURL *curl), (curl))                             \
	VOID(curl_easy_cleanup, (CURL *curl), (curl))                                      \
	FN(const char *, curl_easy_strerror, (CURLcode code), (code))                     \
	FN(struct curl_slist *, curl_slist_append, (struct curl_slist *list, const char *data), \
	   (list, data))                                                                   \
	VOID(curl_slist_free_all, (struct curl_slist *list), (list))

BCI_LAZY_SHIMS(bci_lazy_curl, CURL_FUNCTIONS, "curl_easy_setopt", "curl_easy_getinfo");

/*
 * The two variadic ones take one argument after the option. Its type is the
 * option's (curl.h's CURLOPTTYPE_* ranges, as curl_easy_setopt reads it);
 * every CURLINFO_* takes a pointer.
 */
typedef CURLcode (*setopt_fn)(CURL *, CURLoption, ...);
typedef CURLcode (*getinfo_fn)(CURL *, CURLINFO, ...);

CURLcode(curl_easy_setopt)(CURL *curl, CURLoption option, ...)
{
	setopt_fn fn = BCI_LAZY_RESOLVE(lib, setopt_fn, "curl_easy_setopt");
	CURLcode ret;
	va_list ap;

	va_start(ap, option);
	if (option < CURLOPTTYPE_OBJECTPOINT)
		ret = fn(curl, option, va_arg(ap, long));
	else if (option < CURLOPTTYPE_FUNCTIONPOINT)
		ret = fn(curl, option, va_arg(ap, void *));
	else if (option < CURLOPTTYPE_OFF_T)
		ret = fn(curl, option, va_arg(ap, void (*)(void)));
	else if (option < CURLOPTTYPE_BLOB)
		ret = fn(curl, option, va_arg(ap, curl_off_t));
	else
		ret = fn(curl, option, va_arg(ap, void *));
	va_end(ap);
	return ret;
}

CURLcode(curl_easy_getinfo)(CURL *curl, CURLINFO info, ...)
{
	getinfo_fn fn = BCI_LAZY_RESOLVE(lib, getinfo_fn, "curl_easy_getinfo");
	CURLcode ret;
	va_list ap;

	va_start(ap, info);
	ret = fn(curl, info, va_arg(ap, void *));
	va_end(ap);
	return ret;
}

