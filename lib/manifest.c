// SPDX-License-Identifier: MIT
/*
 * manifest.json (format in manifest.h): the in-memory manifest, the tree walk
 * that fills it (collect's side), the checks the writer and the reader share,
 * and the writer, which streams through lib/jsonw. The reader is
 * lib/manifest_read.c.
 */
#include "manifest.h"
#include "manifest_internal.h"
#include "fsutil.h"
#include "jsonw.h"
#include "message.h"
#include "sort.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct bci_manifest *bci_manifest_new(void)
{
	struct bci_manifest *m = calloc(1, sizeof(*m));

	if (!m)
		return NULL;
	char **strings[] = { &m->run_id, &m->image_id, &m->machine, &m->kernel, &m->cmdline,
			     &m->igt_version, &m->bootci_version };

	m->format_version = BCI_MANIFEST_VERSION;
	m->efi_boot_current = -1;
	for (size_t i = 0; i < sizeof(strings) / sizeof(strings[0]); i++) {
		*strings[i] = strdup("");
		if (!*strings[i]) {
			bci_manifest_free(m);
			return NULL;
		}
	}
	return m;
}

void bci_manifest_free(struct bci_manifest *m)
{
	if (!m)
		return;
	free(m->run_id);
	free(m->image_id);
	free(m->machine);
	free(m->kernel);
	free(m->cmdline);
	free(m->igt_version);
	free(m->bootci_version);
	for (size_t i = 0; i < m->boot_count; i++) {
		for (size_t j = 0; j < m->boots[i].env_count; j++) {
			free(m->boots[i].env[j].key);
			free(m->boots[i].env[j].value);
		}
		free(m->boots[i].env);
		free(m->boots[i].name);
	}
	free(m->boots);
	free(m->efi_boot_order);
	for (size_t i = 0; i < m->efi_entry_count; i++) {
		free(m->efi_entries[i].label);
		free(m->efi_entries[i].device_path);
	}
	free(m->efi_entries);
	bci_arena_free(&m->paths);
	free(m->files);
	free(m);
}

int bci_manifest_set(char **field, const char *value)
{
	char *copy = strdup(value ? value : "");

	if (!copy)
		return -ENOMEM;
	free(*field);
	*field = copy;
	return 0;
}

void *bci_manifest_array_grow(void *array_ptr, size_t *count, size_t size)
{
	void **array = array_ptr;
	char *grown;

	/* Doubling on powers of two keeps appends amortised O(1). */
	if ((*count & (*count - 1)) == 0) {
		size_t capacity = *count ? *count * 2 : 1;

		grown = realloc(*array, capacity * size);
		if (!grown)
			return NULL;
		*array = grown;
	}
	grown = (char *)*array + *count * size;
	memset(grown, 0, size);
	(*count)++;
	return grown;
}

int bci_manifest_add_boot(struct bci_manifest *m, const char *name, struct bci_manifest_boot **out)
{
	struct bci_manifest_boot *boot;
	char *copy = strdup(name);

	if (!copy)
		return -ENOMEM;
	boot = bci_manifest_array_grow(&m->boots, &m->boot_count, sizeof(*boot));
	if (!boot) {
		free(copy);
		return -ENOMEM;
	}
	boot->name = copy;
	if (out)
		*out = boot;
	return 0;
}

int bci_manifest_boot_set(struct bci_manifest_boot *boot, const char *key, const char *value)
{
	struct bci_manifest_pair *pair;
	char *k, *v;

	for (size_t i = 0; i < boot->env_count; i++)
		if (!strcmp(boot->env[i].key, key))
			return bci_manifest_set(&boot->env[i].value, value);
	k = strdup(key);
	v = strdup(value);
	pair = k && v ? bci_manifest_array_grow(&boot->env, &boot->env_count, sizeof(*pair)) : NULL;
	if (!pair) {
		free(k);
		free(v);
		return -ENOMEM;
	}
	pair->key = k;
	pair->value = v;
	return 0;
}

int bci_manifest_add_efi_entry(struct bci_manifest *m, unsigned number, const char *label,
			       bool active, const char *device_path)
{
	struct bci_manifest_efi_entry *entry;
	char *l = strdup(label ? label : ""), *d = strdup(device_path ? device_path : "");

	entry = l && d && number <= 0xffff ?
		bci_manifest_array_grow(&m->efi_entries, &m->efi_entry_count, sizeof(*entry)) : NULL;
	if (!entry) {
		free(l);
		free(d);
		return number > 0xffff ? -EINVAL : -ENOMEM;
	}
	entry->number = number;
	entry->label = l;
	entry->active = active;
	entry->device_path = d;
	return 0;
}

int bci_manifest_add_boot_order(struct bci_manifest *m, unsigned number)
{
	unsigned *slot;

	if (number > 0xffff)
		return -EINVAL;
	slot = bci_manifest_array_grow(&m->efi_boot_order, &m->efi_boot_order_count, sizeof(*slot));
	if (!slot)
		return -ENOMEM;
	*slot = number;
	return 0;
}

int bci_manifest_add_file(struct bci_manifest *m, const char *path, uint64_t size,
			  const char *sha256_hex, char *err, size_t err_size)
{
	struct bci_manifest_file *file;
	char *copy, why[128];

	if (!bci_manifest_path_ok(path, why, sizeof(why))) {
		bci_message(err, err_size, "%s: %s", path, why);
		return -EINVAL;
	}
	if (!bci_sha256_hex_ok(sha256_hex)) {
		bci_message(err, err_size, "%s: sha256 is not 64 lowercase hex digits", path);
		return -EINVAL;
	}
	copy = bci_arena_strdup(&m->paths, path);
	file = copy ? bci_manifest_array_grow(&m->files, &m->file_count, sizeof(*file)) : NULL;
	if (!file) {
		bci_message(err, err_size, "%s: out of memory", path);
		return -ENOMEM;
	}
	file->path = copy;
	file->size = size;
	memcpy(file->sha256, sha256_hex, sizeof(file->sha256));
	return 0;
}

bool bci_manifest_word_ok(const char *word)
{
	size_t i;

	for (i = 0; word[i]; i++) {
		char c = word[i];

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      c == '.' || c == '_' || c == '-'))
			return false;
	}
	return i > 0 && i <= BCI_MANIFEST_WORD_MAX && strcmp(word, ".") && strcmp(word, "..");
}

bool bci_manifest_path_ok(const char *path, char *err, size_t err_size)
{
	size_t len = strlen(path);
	const char *component = path;

	if (len == 0) {
		bci_message(err, err_size, "an empty path");
		return false;
	}
	if (len > BCI_MANIFEST_PATH_MAX) {
		bci_message(err, err_size, "a path of %zu bytes (at most %d)", len, BCI_MANIFEST_PATH_MAX);
		return false;
	}
	if (path[0] == '/') {
		bci_message(err, err_size, "an absolute path");
		return false;
	}
	for (const char *p = path; *p; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f) {
			bci_message(err, err_size, "a control character (byte %zu)", (size_t)(p - path));
			return false;
		}
	for (;;) {
		const char *end = strchrnul(component, '/');
		size_t n = end - component;

		if (n == 0) {
			bci_message(err, err_size, "an empty component");
			return false;
		}
		if (n > NAME_MAX) {
			bci_message(err, err_size, "a component of %zu bytes (at most %d)", n, NAME_MAX);
			return false;
		}
		if ((n == 1 && component[0] == '.') || (n == 2 && !memcmp(component, "..", 2))) {
			bci_message(err, err_size, "a '%.*s' component", (int)n, component);
			return false;
		}
		if (!*end)
			return true;
		component = end + 1;
	}
}

static int file_compare(const void *a, const void *b)
{
	return strcmp(((const struct bci_manifest_file *)a)->path,
		      ((const struct bci_manifest_file *)b)->path);
}

/* The file whose path is the first @len bytes of @path, or NULL (binary search, sorted files). */
static const struct bci_manifest_file *find_prefix(const struct bci_manifest *m, const char *path,
						   size_t len)
{
	size_t low = 0, high = m->file_count;

	while (low < high) {
		size_t mid = low + (high - low) / 2;
		int c = strncmp(m->files[mid].path, path, len);

		if (c == 0 && m->files[mid].path[len])
			c = 1;
		if (c == 0)
			return &m->files[mid];
		if (c < 0)
			low = mid + 1;
		else
			high = mid;
	}
	return NULL;
}

/*
 * Sorts the files, and refuses a path given twice or below another file (a
 * path cannot be a file and a folder). The folders are checked once each:
 * sorted, a folder's files mostly follow each other.
 */
static int files_sort(struct bci_manifest *m, char *err, size_t err_size)
{
	const char *checked = "";
	size_t checked_len = 0;

	if (m->file_count > 1)
		bci_sort(m->files, m->file_count, sizeof(m->files[0]), file_compare);
	for (size_t i = 0; i < m->file_count; i++) {
		const char *path = m->files[i].path, *slash = strrchr(path, '/');
		size_t dir_len = slash ? (size_t)(slash - path) : 0;

		if (i && !strcmp(m->files[i - 1].path, path)) {
			bci_message(err, err_size, "files: '%s' listed twice", path);
			return -EINVAL;
		}
		if (!dir_len || (dir_len == checked_len && !strncmp(path, checked, dir_len)))
			continue;
		for (const char *p = path; (p = strchr(p, '/')); p++)
			if (find_prefix(m, path, (size_t)(p - path))) {
				bci_message(err, err_size, "files: '%s' is below the file '%.*s'", path,
					    (int)(p - path), path);
				return -EINVAL;
			}
		checked = path;
		checked_len = dir_len;
	}
	return 0;
}

const struct bci_manifest_file *bci_manifest_find(const struct bci_manifest *m, const char *path)
{
	struct bci_manifest_file key = { .path = (char *)path };

	if (!m->file_count)
		return NULL;
	return bsearch(&key, m->files, m->file_count, sizeof(m->files[0]), file_compare);
}

/* ---- the tree walk (collect's side) ---- */

static int tree_add(struct bci_manifest *m, int dirfd, const char *rel, char *err, size_t err_size)
{
	struct dirent *entry;
	DIR *dir;
	int ret = 0;

	dir = fdopendir(dirfd);
	if (!dir) {
		ret = -errno;
		close(dirfd);
		bci_message(err, err_size, "%s: %s", *rel ? rel : ".", strerror(-ret));
		return ret;
	}
	while (ret == 0 && (errno = 0, entry = readdir(dir))) {
		char path[BCI_MANIFEST_PATH_MAX + 2];
		struct stat st;
		int fd;

		if (!strcmp(entry->d_name, ".") || !strcmp(entry->d_name, ".."))
			continue;
		if (!*rel && !strcmp(entry->d_name, BCI_MANIFEST_NAME))
			continue;
		if ((size_t)snprintf(path, sizeof(path), "%s%s%s", rel, *rel ? "/" : "",
				     entry->d_name) >= sizeof(path) - 1) {
			bci_message(err, err_size, "%s/%s: path longer than %d bytes", rel,
				    entry->d_name, BCI_MANIFEST_PATH_MAX);
			ret = -ENAMETOOLONG;
			break;
		}
		if (fstatat(dirfd, entry->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
			ret = -errno;
			bci_message(err, err_size, "%s: %s", path, strerror(errno));
			break;
		}
		if (S_ISDIR(st.st_mode)) {
			fd = openat(dirfd, entry->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			if (fd < 0) {
				ret = -errno;
				bci_message(err, err_size, "%s: %s", path, strerror(errno));
				break;
			}
			ret = tree_add(m, fd, path, err, err_size);
		} else if (S_ISREG(st.st_mode)) {
			char hex[BCI_SHA256_HEX_LEN + 1];
			uint64_t size;

			fd = openat(dirfd, entry->d_name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
			if (fd < 0) {
				ret = -errno;
				bci_message(err, err_size, "%s: %s", path, strerror(errno));
				break;
			}
			ret = bci_sha256_fd(fd, hex, &size);
			close(fd);
			if (ret < 0)
				bci_message(err, err_size, "%s: %s", path, strerror(-ret));
			else
				ret = bci_manifest_add_file(m, path, size, hex, err, err_size);
		} else {
			bci_message(err, err_size, "%s: not a regular file or a folder", path);
			ret = -EINVAL;
		}
	}
	if (ret == 0 && errno) {
		ret = -errno;
		bci_message(err, err_size, "%s: %s", *rel ? rel : ".", strerror(errno));
	}
	closedir(dir);
	return ret;
}

int bci_manifest_add_tree(struct bci_manifest *m, const char *dir, char *err, size_t err_size)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	int ret;

	if (fd < 0) {
		ret = -errno;
		bci_message(err, err_size, "%s: %s", dir, strerror(errno));
		return ret;
	}
	ret = tree_add(m, fd, "", err, err_size);
	if (ret < 0)
		return ret;
	return files_sort(m, err, err_size);
}

/* ---- checks shared by the writer and the reader ---- */

int bci_manifest_check(struct bci_manifest *m, char *err, size_t err_size)
{
	char why[256];

	if (m->format_version != BCI_MANIFEST_VERSION) {
		bci_message(err, err_size, "format_version %d is not supported (this bootci reads %d)",
			    m->format_version, BCI_MANIFEST_VERSION);
		return -EINVAL;
	}
	if (!bci_manifest_word_ok(m->run_id)) {
		bci_message(err, err_size, "run_id '%.64s' is not a word ([A-Za-z0-9._-], 1 to %d)",
			    m->run_id, BCI_MANIFEST_WORD_MAX);
		return -EINVAL;
	}
	if (!bci_manifest_word_ok(m->machine)) {
		bci_message(err, err_size, "machine '%.64s' is not a word ([A-Za-z0-9._-], 1 to %d)",
			    m->machine, BCI_MANIFEST_WORD_MAX);
		return -EINVAL;
	}
	for (size_t i = 0; i < m->boot_count; i++) {
		const char *name = m->boots[i].name;

		if (!bci_manifest_path_ok(name, why, sizeof(why)) || strchr(name, '/')) {
			bci_message(err, err_size, "boots: '%.64s' is not a folder name", name);
			return -EINVAL;
		}
		for (size_t j = 0; j < i; j++)
			if (!strcmp(m->boots[j].name, name)) {
				bci_message(err, err_size, "boots: '%s' given twice", name);
				return -EINVAL;
			}
	}
	for (size_t i = 0; i < m->efi_entry_count; i++)
		if (m->efi_entries[i].number > 0xffff) {
			bci_message(err, err_size, "efi.entries[%zu].number: above 0xffff", i);
			return -EINVAL;
		}
	if (m->efi_boot_current > 0xffff) {
		bci_message(err, err_size, "efi.boot_current: above 0xffff");
		return -EINVAL;
	}
	for (size_t i = 0; i < m->file_count; i++) {
		const struct bci_manifest_file *f = &m->files[i];

		if (!bci_manifest_path_ok(f->path, why, sizeof(why))) {
			bci_message(err, err_size, "files[%zu].path: %s", i, why);
			return -EINVAL;
		}
		if (!strcmp(f->path, BCI_MANIFEST_NAME)) {
			bci_message(err, err_size, "files[%zu].path: the manifest cannot list itself", i);
			return -EINVAL;
		}
		if (!bci_sha256_hex_ok(f->sha256)) {
			bci_message(err, err_size, "files[%zu].sha256: not 64 lowercase hex digits", i);
			return -EINVAL;
		}
		if (f->size > MANIFEST_SIZE_MAX) {
			bci_message(err, err_size, "files[%zu].size: %llu is absurd", i,
				    (unsigned long long)f->size);
			return -EINVAL;
		}
	}
	return files_sort(m, err, err_size);
}

/* ---- writer ---- */

int bci_manifest_write(struct bci_manifest *m, FILE *out, char *err, size_t err_size)
{
	struct bci_jsonw w;
	int ret;

	ret = bci_manifest_check(m, err, err_size);
	if (ret < 0)
		return ret;
	bci_jsonw_init(&w, out, 1);
	bci_jsonw_object_begin(&w);
	bci_jsonw_key(&w, "format");
	bci_jsonw_string(&w, BCI_MANIFEST_FORMAT);
	bci_jsonw_key(&w, "format_version");
	bci_jsonw_int(&w, m->format_version);
	bci_jsonw_key(&w, "run_id");
	bci_jsonw_string(&w, m->run_id);
	bci_jsonw_key(&w, "image_id");
	bci_jsonw_string(&w, m->image_id);
	bci_jsonw_key(&w, "machine");
	bci_jsonw_string(&w, m->machine);
	bci_jsonw_key(&w, "kernel");
	bci_jsonw_string(&w, m->kernel);
	bci_jsonw_key(&w, "cmdline");
	bci_jsonw_string(&w, m->cmdline);
	bci_jsonw_key(&w, "versions");
	bci_jsonw_object_begin(&w);
	bci_jsonw_key(&w, "igt");
	bci_jsonw_string(&w, m->igt_version);
	bci_jsonw_key(&w, "bootci");
	bci_jsonw_string(&w, m->bootci_version);
	bci_jsonw_object_end(&w);

	bci_jsonw_key(&w, "boots");
	bci_jsonw_object_begin(&w);
	for (size_t i = 0; i < m->boot_count; i++) {
		bci_jsonw_key(&w, m->boots[i].name);
		bci_jsonw_object_begin(&w);
		for (size_t j = 0; j < m->boots[i].env_count; j++) {
			bci_jsonw_key(&w, m->boots[i].env[j].key);
			bci_jsonw_string(&w, m->boots[i].env[j].value);
		}
		bci_jsonw_object_end(&w);
	}
	bci_jsonw_object_end(&w);

	bci_jsonw_key(&w, "efi");
	bci_jsonw_object_begin(&w);
	bci_jsonw_key(&w, "boot_current");
	if (m->efi_boot_current < 0)
		bci_jsonw_null(&w);
	else
		bci_jsonw_int(&w, m->efi_boot_current);
	bci_jsonw_key(&w, "boot_order");
	bci_jsonw_array_begin(&w);
	for (size_t i = 0; i < m->efi_boot_order_count; i++)
		bci_jsonw_int(&w, m->efi_boot_order[i]);
	bci_jsonw_array_end(&w);
	bci_jsonw_key(&w, "entries");
	bci_jsonw_array_begin(&w);
	for (size_t i = 0; i < m->efi_entry_count; i++) {
		const struct bci_manifest_efi_entry *e = &m->efi_entries[i];

		bci_jsonw_object_begin(&w);
		bci_jsonw_key(&w, "number");
		bci_jsonw_int(&w, e->number);
		bci_jsonw_key(&w, "label");
		bci_jsonw_string(&w, e->label);
		bci_jsonw_key(&w, "active");
		bci_jsonw_bool(&w, e->active);
		bci_jsonw_key(&w, "device_path");
		bci_jsonw_string(&w, e->device_path);
		bci_jsonw_object_end(&w);
	}
	bci_jsonw_array_end(&w);
	bci_jsonw_object_end(&w);

	bci_jsonw_key(&w, "files");
	bci_jsonw_array_begin(&w);
	for (size_t i = 0; i < m->file_count; i++) {
		bci_jsonw_object_begin(&w);
		bci_jsonw_key(&w, "path");
		bci_jsonw_string(&w, m->files[i].path);
		bci_jsonw_key(&w, "size");
		bci_jsonw_int(&w, (long long)m->files[i].size);
		bci_jsonw_key(&w, "sha256");
		bci_jsonw_string(&w, m->files[i].sha256);
		bci_jsonw_object_end(&w);
	}
	bci_jsonw_array_end(&w);
	bci_jsonw_object_end(&w);
	ret = bci_jsonw_finish(&w);
	if (ret < 0)
		bci_message(err, err_size, "writing the manifest: %s", strerror(-ret));
	return ret;
}
