/* SPDX-License-Identifier: MIT */
/*
 * Libraries that only some commands need, loaded when one of their functions
 * is first called (dlopen) instead of at every start: libcurl (collect,
 * publish), libpq (a PostgreSQL store), libmicrohttpd (serve) and libarchive
 * (collect's packing, archives not in collect's form, serve's upload check).
 * Linked at start they brought 40 more libraries (OpenSSL, GnuTLS, Kerberos,
 * LDAP, ICU...), whose mapping, relocations and constructors made every
 * command's start about 30 ms instead of 10, ingest and report included.
 *
 * Each shim file (curl.c, pq.c, mhd.c, archive.c here) defines the functions
 * bootci calls, under their own names and with the prototypes of the
 * library's own header, which the compiler holds them to; callers include the
 * library's header as before and do not know. The first call resolves the
 * function (dlsym) and keeps it; later calls go straight to it.
 *
 * A library that cannot be loaded ends the process with exit status 127,
 * naming the library, its Debian package and the loader's reason: what the
 * dynamic loader itself does at start when a needed library is missing, only
 * later, and only for a command that needs it. These libraries are installed
 * with the aggregator (builder/setup/host-deps.sh); their absence is a broken
 * installation, not an error a caller could handle.
 */
#ifndef BCI_LAZY_H
#define BCI_LAZY_H

#include <stddef.h>

struct bci_lazy_lib {
	const char *soname;  /* as the dynamic loader would find it: "libcurl.so.4" */
	const char *package; /* the Debian package that installs it */
	void *handle;        /* dlopen's, once loaded (atomic) */
};

/* The functions one shim file defines: the library and the names, for the test of them all. */
struct bci_lazy_table {
	struct bci_lazy_lib *lib;
	const char *const *names;
	size_t count;
};

extern const struct bci_lazy_table bci_lazy_curl, bci_lazy_pq, bci_lazy_mhd, bci_lazy_archive;

/*
 * @name in @lib (loaded on first use), or NULL with the reason in @err
 * ("libcurl.so.4 (Debian package libcurl4): <dlerror>").
 */
void *bci_lazy_find(struct bci_lazy_lib *lib, const char *name, char *err, size_t err_size);

/* @name in @lib; when it cannot be had, the reason on stderr and exit(127). */
void *bci_lazy_sym(struct bci_lazy_lib *lib, const char *name);

/*
 * The function @name of @lib as a pointer of @type, resolved on the first
 * call through this place and kept (a GNU statement expression).
 */
#define BCI_LAZY_RESOLVE(lib, type, name)                                              \
	({                                                                             \
		static type lazy_kept;                                                 \
		type lazy_fn = __atomic_load_n(&lazy_kept, __ATOMIC_ACQUIRE);          \
		if (!lazy_fn) {                                                        \
			lazy_fn = (type)bci_lazy_sym(&(lib), (name));                  \
			__atomic_store_n(&lazy_kept, lazy_fn, __ATOMIC_RELEASE);       \
		}                                                                      \
		lazy_fn;                                                               \
	})

/*
 * The shim of a function returning a value, and of one returning void:
 * @params with the types, @args the same names bare.
 */
#define BCI_LAZY_FN(lib, ret, name, params, args)                                      \
	ret(name) params                                                               \
	{                                                                              \
		typedef ret(*fn_type) params;                                          \
		return BCI_LAZY_RESOLVE(lib, fn_type, #name) args;                     \
	}
#define BCI_LAZY_VOID(lib, name, params, args)                                         \
	void(name) params                                                              \
	{                                                                              \
		typedef void(*fn_type) params;                                         \
		BCI_LAZY_RESOLVE(lib, fn_type, #name) args;                            \
	}

/*
 * A shim file's functions and table: @LIST(FN, VOID) names each function as
 * FN(ret, name, params, args) or VOID(name, params, args); the file's library
 * is its `static struct bci_lazy_lib lib`; @... are the names of the shims
 * it writes by hand (variadic ones), for the table.
 */
#define BCI_LAZY_DEFINE_FN(ret, name, params, args) BCI_LAZY_FN(lib, ret, name, params, args)
#define BCI_LAZY_DEFINE_VOID(name, params, args) BCI_LAZY_VOID(lib, name, params, args)
#define BCI_LAZY_NAME_FN(ret, name, params, args) #name,
#define BCI_LAZY_NAME_VOID(name, params, args) #name,
#define BCI_LAZY_SHIMS(table, LIST, ...)                                               \
	LIST(BCI_LAZY_DEFINE_FN, BCI_LAZY_DEFINE_VOID)                                 \
	static const char *const table##_names[] = {                                   \
		LIST(BCI_LAZY_NAME_FN, BCI_LAZY_NAME_VOID) __VA_ARGS__                 \
	};                                                                             \
	const struct bci_lazy_table table = { &lib, table##_names,                     \
					      sizeof(table##_names) / sizeof(table##_names[0]) }

#endif
