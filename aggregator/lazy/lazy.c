// SPDX-License-Identifier: MIT
/* Loading a library on first use (lazy.h). */
#include "lazy.h"

#include "message.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

/* dlerror() is per thread, but two threads loading one library at once would both dlopen it. */
static pthread_mutex_t load_lock = PTHREAD_MUTEX_INITIALIZER;

static void *lib_handle(struct bci_lazy_lib *lib, char *err, size_t err_size)
{
	void *handle = __atomic_load_n(&lib->handle, __ATOMIC_ACQUIRE);

	if (handle)
		return handle;
	pthread_mutex_lock(&load_lock);
	handle = lib->handle;
	if (!handle) {
		/* RTLD_LOCAL: its symbols serve only the lookups below, never the shims' names. */
		handle = dlopen(lib->soname, RTLD_NOW | RTLD_LOCAL);
		if (handle)
			__atomic_store_n(&lib->handle, handle, __ATOMIC_RELEASE);
		else
			bci_message(err, err_size, "%s (Debian package %s): %s", lib->soname,
				    lib->package, dlerror());
	}
	pthread_mutex_unlock(&load_lock);
	return handle;
}

void *bci_lazy_find(struct bci_lazy_lib *lib, const char *name, char *err, size_t err_size)
{
	void *handle = lib_handle(lib, err, err_size), *fn;
	const char *why;

	if (!handle)
		return NULL;
	/* A handle's lookup searches the library and its own dependencies, not the program. */
	dlerror();
	fn = dlsym(handle, name);
	why = dlerror();
	if (!fn || why) {
		bci_message(err, err_size, "%s (Debian package %s): no function %s: %s",
			    lib->soname, lib->package, name, why ? why : "NULL");
		return NULL;
	}
	return fn;
}

void *bci_lazy_sym(struct bci_lazy_lib *lib, const char *name)
{
	char err[512];
	void *fn = bci_lazy_find(lib, name, err, sizeof(err));

	if (!fn) {
		fprintf(stderr, "bootci-aggregator: cannot load %s\n", err);
		exit(127);
	}
	return fn;
}
