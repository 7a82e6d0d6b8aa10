/* SPDX-License-Identifier: MIT */
/*
 * The executor's configuration keys: one table holding every key's name,
 * type, default, one-line documentation (`bootci-executor --help-config`,
 * bootci-executor.conf(5)) and the checks its type cannot say. The executor reads its
 * configuration through it (executor/settings.c: /etc/bootci/executor.conf,
 * then `bootci.<key>=<value>` on the kernel command line) and the builder
 * checks the executor.conf it packs through it, so a typo fails the build
 * instead of the test machine's boot.
 *
 * Adding a key: one line in the table (lib/executor_keys.c) and its use.
 */
#ifndef BCI_EXECUTOR_KEYS_H
#define BCI_EXECUTOR_KEYS_H

#include <stddef.h>

#include "config.h"

/* Where the executor reads its configuration file, and the command line's prefix. */
#define BCI_EXECUTOR_CONFIG_FILE "/etc/bootci/executor.conf"
#define BCI_EXECUTOR_CMDLINE_PREFIX "bootci."

/*
 * Values joined into paths are checked so that they cannot leave the folder
 * they are joined to. A name (run_id, suspend_rtc: one path component) is 1
 * to BCI_EXECUTOR_NAME_MAX characters of A-Z a-z 0-9 '.' '_' '-', not
 * starting with '.' (so never "." or ".."); a run_id also never holds
 * BCI_EXECUTOR_SUPERSEDED, the suffix of a run kept aside. A path in the
 * image (testlist, test_dir) is absolute, without "." or ".." components.
 * Both: 0, or -EINVAL with what is wrong in @why ("is not a name: ...", to
 * follow the key and the value).
 */
#define BCI_EXECUTOR_NAME_MAX 128
#define BCI_EXECUTOR_SUPERSEDED ".superseded-"
int bci_executor_name_check(const char *value, char *why, size_t why_size);
int bci_executor_image_path_check(const char *value, char *why, size_t why_size);

/* Terminated by an entry with a NULL name. */
extern const struct bci_config_key bci_executor_keys[];

/*
 * A configuration with every key of the table, filled from @file_text
 * (@file_len bytes of a file named @file_name; NULL: no file) and then the
 * `bootci.<key>=` parameters of @cmdline (NULL: none), then checked as a whole
 * (checks across keys). 0, or -EINVAL/-ENOMEM with the message naming
 * file:line or the command line, the key and the value in @err. Either way
 * *@out is owned by the caller (bci_config_free) and holds every value set
 * before the bad one (a failing boot still ends as its on_error says), or is
 * NULL when even the defaults could not be allocated.
 */
int bci_executor_config_load(const char *file_name, const char *file_text, size_t file_len,
			     const char *cmdline, struct bci_config **out, char *err,
			     size_t err_size);

#endif
