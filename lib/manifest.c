// SPDX-License-Identifier: MIT
/*
 * manifest.json reader and writer (format in manifest.h). The writer streams
 * through lib/jsonw. The reader walks the top-level object itself and hands
 * each member's value to json-c (strict mode, UTF-8 checked), except the
 * files array, whose entries are parsed and turned into bci_manifest_file one
 * at a time: a whole-document json-c tree of a 40k-file run is ~30 MB, the
 * entries themselves a sixth of that. The members are then checked in the
 * same order as ever, so every error names its member as before.
 */
#include "manifest.h"
#include "fsutil.h"
#include "jsonw.h"
#include "message.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <gnutls/crypto.h>
#include <json.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Sizes above this are refused as absurd (and stay exact in every JSON reader). */
#define MANIFEST_SIZE_MAX (1ULL << 53)
/* Nesting the format needs is 4; anything deeper is refused by the tokenizer. */
#define MANIFEST_DEPTH 8

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
	for (size_t i = 0; i < m->file_count; i++)
		free(m->files[i].path);
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

/* Grows *@array (elements of @size) by one zeroed element; returns it or NULL. */
static void *array_grow(void *array_ptr, size_t *count, size_t size)
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
	boot = array_grow(&m->boots, &m->boot_count, sizeof(*boot));
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
	pair = k && v ? array_grow(&boot->env, &boot->env_count, sizeof(*pair)) : NULL;
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
		array_grow(&m->efi_entries, &m->efi_entry_count, sizeof(*entry)) : NULL;
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
	slot = array_grow(&m->efi_boot_order, &m->efi_boot_order_count, sizeof(*slot));
	if (!slot)
		return -ENOMEM;
	*slot = number;
	return 0;
}

static bool sha256_hex_ok(const char *hex)
{
	size_t i;

	for (i = 0; hex[i]; i++)
		if (!((hex[i] >= '0' && hex[i] <= '9') || (hex[i] >= 'a' && hex[i] <= 'f')))
			return false;
	return i == BCI_SHA256_HEX_LEN;
}

int bci_manifest_add_file(struct bci_manifest *m, const char *path, uint64_t size,
			  const char *sha256_hex, char *err, size_t err_size)
{
	struct bci_manifest_file *file;
	char *copy;

	if (!bci_manifest_path_ok(path, err, err_size))
		return -EINVAL;
	if (!sha256_hex_ok(sha256_hex)) {
		bci_message(err, err_size, "%s: sha256 is not 64 lowercase hex digits", path);
		return -EINVAL;
	}
	copy = strdup(path);
	file = copy ? array_grow(&m->files, &m->file_count, sizeof(*file)) : NULL;
	if (!file) {
		free(copy);
		bci_message(err, err_size, "%s: out of memory", path);
		return -ENOMEM;
	}
	file->path = copy;
	file->size = size;
	memcpy(file->sha256, sha256_hex, sizeof(file->sha256));
	return 0;
}

void bci_sha256_hex(const unsigned char digest[32], char hex[BCI_SHA256_HEX_LEN + 1])
{
	static const char digits[] = "0123456789abcdef";

	for (int i = 0; i < 32; i++) {
		hex[2 * i] = digits[digest[i] >> 4];
		hex[2 * i + 1] = digits[digest[i] & 15];
	}
	hex[BCI_SHA256_HEX_LEN] = '\0';
}

int bci_sha256_fd(int fd, char hex[BCI_SHA256_HEX_LEN + 1], uint64_t *size)
{
	unsigned char buf[65536], digest[32];
	gnutls_hash_hd_t hash;
	uint64_t total = 0;
	int ret = 0;

	if (gnutls_hash_init(&hash, GNUTLS_DIG_SHA256) < 0)
		return -ENOMEM;
	for (;;) {
		ssize_t n = bci_read_retry(fd, buf, sizeof(buf));

		if (n <= 0) {
			ret = (int)n;
			break;
		}
		gnutls_hash(hash, buf, n);
		total += n;
	}
	gnutls_hash_deinit(hash, digest);
	if (ret == 0) {
		bci_sha256_hex(digest, hex);
		if (size)
			*size = total;
	}
	return ret;
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
		bci_message(err, err_size, "empty path");
		return false;
	}
	if (len > BCI_MANIFEST_PATH_MAX) {
		bci_message(err, err_size, "path of %zu bytes (at most %d)", len, BCI_MANIFEST_PATH_MAX);
		return false;
	}
	if (path[0] == '/') {
		bci_message(err, err_size, "'%s': absolute path", path);
		return false;
	}
	for (const char *p = path; *p; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f) {
			bci_message(err, err_size, "path with a control character (byte %zu)",
				    (size_t)(p - path));
			return false;
		}
	for (;;) {
		const char *end = strchrnul(component, '/');
		size_t n = end - component;

		if (n == 0) {
			bci_message(err, err_size, "'%s': empty path component", path);
			return false;
		}
		if ((n == 1 && component[0] == '.') || (n == 2 && !memcmp(component, "..", 2))) {
			bci_message(err, err_size, "'%s': '%.*s' component", path, (int)n, component);
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

/* Sorts the files and refuses a path given twice. */
static int files_sort(struct bci_manifest *m, char *err, size_t err_size)
{
	if (m->file_count > 1)
		qsort(m->files, m->file_count, sizeof(m->files[0]), file_compare);
	for (size_t i = 1; i < m->file_count; i++)
		if (!strcmp(m->files[i - 1].path, m->files[i].path)) {
			bci_message(err, err_size, "files: '%s' listed twice", m->files[i].path);
			return -EINVAL;
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

static int manifest_check(struct bci_manifest *m, char *err, size_t err_size)
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
		if (!sha256_hex_ok(f->sha256)) {
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

	ret = manifest_check(m, err, err_size);
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

/* ---- reader ---- */

struct reader {
	char *err;
	size_t err_size;
	/* The files array, read while the outline is walked: its first error, kept till its turn. */
	bool files_streamed;
	int files_ret;
	char files_err[512];
};

/*
 * Members of @obj must be exactly @names (NULL-terminated): a missing one or
 * one the format does not have is an error naming it under @where.
 */
static int members_exact(struct reader *r, struct json_object *obj, const char *where,
			 const char *const *names)
{
	size_t expected = 0;

	for (; names[expected]; expected++)
		if (!json_object_object_get_ex(obj, names[expected], NULL)) {
			bci_message(r->err, r->err_size, "%s%s%s: missing", where, *where ? "." : "",
				    names[expected]);
			return -EINVAL;
		}
	json_object_object_foreach(obj, key, value) {
		size_t i;

		(void)value;
		for (i = 0; names[i] && strcmp(names[i], key); i++)
			;
		if (!names[i]) {
			bci_message(r->err, r->err_size, "%s%s%.64s: unknown member", where,
				    *where ? "." : "", key);
			return -EINVAL;
		}
	}
	return 0;
}

static int get_typed(struct reader *r, struct json_object *obj, const char *where, const char *key,
		     enum json_type type, struct json_object **out)
{
	static const char *const type_names[] = {
		[json_type_null] = "null", [json_type_boolean] = "a boolean",
		[json_type_double] = "a fraction", [json_type_int] = "an integer",
		[json_type_object] = "an object", [json_type_array] = "an array",
		[json_type_string] = "a string",
	};
	struct json_object *value = json_object_object_get(obj, key);

	if (!json_object_is_type(value, type)) {
		bci_message(r->err, r->err_size, "%s%s%s: %s, expected %s", where, *where ? "." : "",
			    key, type_names[json_object_get_type(value)], type_names[type]);
		return -EINVAL;
	}
	*out = value;
	return 0;
}

static int get_string(struct reader *r, struct json_object *obj, const char *where, const char *key,
		      char **out)
{
	struct json_object *value;
	int ret = get_typed(r, obj, where, key, json_type_string, &value);

	if (ret < 0)
		return ret;
	/* A \u0000 would cut the C string short: "a\u0000b" must not pass for "a". */
	if ((size_t)json_object_get_string_len(value) != strlen(json_object_get_string(value))) {
		bci_message(r->err, r->err_size, "%s%s%s: a NUL character in the string", where,
			    *where ? "." : "", key);
		return -EINVAL;
	}
	return bci_manifest_set(out, json_object_get_string(value));
}

/* An integer in [@min, @max]. */
static int get_int(struct reader *r, struct json_object *obj, const char *where, const char *key,
		   int64_t min, int64_t max, int64_t *out)
{
	struct json_object *value;
	int ret = get_typed(r, obj, where, key, json_type_int, &value);
	int64_t v;

	if (ret < 0)
		return ret;
	errno = 0;
	v = json_object_get_int64(value);
	if (errno || v < min || v > max) {
		bci_message(r->err, r->err_size, "%s%s%s: %s out of range [%lld, %lld]", where,
			    *where ? "." : "", key, json_object_get_string(value), (long long)min,
			    (long long)max);
		return -EINVAL;
	}
	*out = v;
	return 0;
}

static int read_boots(struct reader *r, struct json_object *boots, struct bci_manifest *m)
{
	json_object_object_foreach(boots, name, env) {
		struct bci_manifest_boot *boot;
		char where[128];
		int ret;

		snprintf(where, sizeof(where), "boots.%.64s", name);
		if (!json_object_is_type(env, json_type_object)) {
			bci_message(r->err, r->err_size, "%s: not an object", where);
			return -EINVAL;
		}
		ret = bci_manifest_add_boot(m, name, &boot);
		if (ret < 0)
			return ret;
		json_object_object_foreach(env, key, value) {
			if (!json_object_is_type(value, json_type_string)) {
				bci_message(r->err, r->err_size, "%s.%.64s: not a string", where, key);
				return -EINVAL;
			}
			ret = bci_manifest_boot_set(boot, key, json_object_get_string(value));
			if (ret < 0)
				return ret;
		}
	}
	return 0;
}

static int read_efi(struct reader *r, struct json_object *efi, struct bci_manifest *m)
{
	static const char *const members[] = { "boot_current", "boot_order", "entries", NULL };
	static const char *const entry_members[] = { "number", "label", "active", "device_path",
						     NULL };
	struct json_object *order, *entries, *current;
	int64_t v;
	int ret;

	ret = members_exact(r, efi, "efi", members);
	if (ret < 0)
		return ret;
	current = json_object_object_get(efi, "boot_current");
	if (current) {
		ret = get_int(r, efi, "efi", "boot_current", 0, 0xffff, &v);
		if (ret < 0)
			return ret;
		m->efi_boot_current = (int)v;
	}
	if ((ret = get_typed(r, efi, "efi", "boot_order", json_type_array, &order)) < 0 ||
	    (ret = get_typed(r, efi, "efi", "entries", json_type_array, &entries)) < 0)
		return ret;
	for (size_t i = 0; i < json_object_array_length(order); i++) {
		struct json_object *n = json_object_array_get_idx(order, i);

		errno = 0;
		v = json_object_get_int64(n);
		if (!json_object_is_type(n, json_type_int) || errno || v < 0 || v > 0xffff) {
			bci_message(r->err, r->err_size, "efi.boot_order[%zu]: not a number 0..65535", i);
			return -EINVAL;
		}
		ret = bci_manifest_add_boot_order(m, (unsigned)v);
		if (ret < 0)
			return ret;
	}
	for (size_t i = 0; i < json_object_array_length(entries); i++) {
		struct json_object *e = json_object_array_get_idx(entries, i), *active;
		char where[64], *label = NULL, *path = NULL;

		snprintf(where, sizeof(where), "efi.entries[%zu]", i);
		if (!json_object_is_type(e, json_type_object)) {
			bci_message(r->err, r->err_size, "%s: not an object", where);
			return -EINVAL;
		}
		if ((ret = members_exact(r, e, where, entry_members)) < 0 ||
		    (ret = get_int(r, e, where, "number", 0, 0xffff, &v)) < 0 ||
		    (ret = get_typed(r, e, where, "active", json_type_boolean, &active)) < 0 ||
		    (ret = get_string(r, e, where, "label", &label)) < 0 ||
		    (ret = get_string(r, e, where, "device_path", &path)) < 0 ||
		    (ret = bci_manifest_add_efi_entry(m, (unsigned)v, label, json_object_get_boolean(active),
						      path)) < 0) {
			free(label);
			free(path);
			return ret;
		}
		free(label);
		free(path);
	}
	return 0;
}

/* Entry @i of the files array, appended to @m->files. */
static int read_file_entry(struct reader *r, struct json_object *f, size_t i,
			   struct bci_manifest *m)
{
	static const char *const members[] = { "path", "size", "sha256", NULL };
	struct json_object *hash;
	struct bci_manifest_file *file;
	char where[64];
	int64_t size;
	int ret;

	snprintf(where, sizeof(where), "files[%zu]", i);
	if (!json_object_is_type(f, json_type_object)) {
		bci_message(r->err, r->err_size, "%s: not an object", where);
		return -EINVAL;
	}
	if ((ret = members_exact(r, f, where, members)) < 0 ||
	    (ret = get_int(r, f, where, "size", 0, (int64_t)MANIFEST_SIZE_MAX, &size)) < 0 ||
	    (ret = get_typed(r, f, where, "sha256", json_type_string, &hash)) < 0)
		return ret;
	if (strlen(json_object_get_string(hash)) != BCI_SHA256_HEX_LEN) {
		bci_message(r->err, r->err_size, "%s.sha256: not 64 lowercase hex digits", where);
		return -EINVAL;
	}
	file = array_grow(&m->files, &m->file_count, sizeof(*file));
	if (!file)
		return -ENOMEM;
	file->size = (uint64_t)size;
	memcpy(file->sha256, json_object_get_string(hash), sizeof(file->sha256));
	return get_string(r, f, where, "path", &file->path);
}

static int read_manifest(struct reader *r, struct json_object *root, struct bci_manifest *m)
{
	static const char *const members[] = { "format", "format_version", "run_id", "image_id",
					       "machine", "kernel", "cmdline", "versions",
					       "boots", "efi", "files", NULL };
	static const char *const version_members[] = { "igt", "bootci", NULL };
	struct json_object *format, *versions, *boots, *efi, *files;
	int64_t version;
	int ret;

	if (!json_object_is_type(root, json_type_object)) {
		bci_message(r->err, r->err_size, "not a JSON object");
		return -EINVAL;
	}
	/* The version first: a newer manifest is told apart from a broken one. */
	if ((ret = get_typed(r, root, "", "format", json_type_string, &format)) < 0)
		return ret;
	if (strcmp(json_object_get_string(format), BCI_MANIFEST_FORMAT)) {
		bci_message(r->err, r->err_size, "format: '%.64s', expected '%s'",
			    json_object_get_string(format), BCI_MANIFEST_FORMAT);
		return -EINVAL;
	}
	if ((ret = get_int(r, root, "", "format_version", 0, INT32_MAX, &version)) < 0)
		return ret;
	if (version != BCI_MANIFEST_VERSION) {
		bci_message(r->err, r->err_size,
			    "format_version %lld is not supported (this bootci reads %d)",
			    (long long)version, BCI_MANIFEST_VERSION);
		return -EINVAL;
	}
	if ((ret = members_exact(r, root, "", members)) < 0 ||
	    (ret = get_string(r, root, "", "run_id", &m->run_id)) < 0 ||
	    (ret = get_string(r, root, "", "image_id", &m->image_id)) < 0 ||
	    (ret = get_string(r, root, "", "machine", &m->machine)) < 0 ||
	    (ret = get_string(r, root, "", "kernel", &m->kernel)) < 0 ||
	    (ret = get_string(r, root, "", "cmdline", &m->cmdline)) < 0 ||
	    (ret = get_typed(r, root, "", "versions", json_type_object, &versions)) < 0 ||
	    (ret = members_exact(r, versions, "versions", version_members)) < 0 ||
	    (ret = get_string(r, versions, "versions", "igt", &m->igt_version)) < 0 ||
	    (ret = get_string(r, versions, "versions", "bootci", &m->bootci_version)) < 0 ||
	    (ret = get_typed(r, root, "", "boots", json_type_object, &boots)) < 0 ||
	    (ret = read_boots(r, boots, m)) < 0 ||
	    (ret = get_typed(r, root, "", "efi", json_type_object, &efi)) < 0 ||
	    (ret = read_efi(r, efi, m)) < 0 ||
	    (ret = get_typed(r, root, "", "files", json_type_array, &files)) < 0)
		return ret;
	if (r->files_streamed && r->files_ret < 0) {
		bci_message(r->err, r->err_size, "%s", r->files_err);
		return r->files_ret;
	}
	return manifest_check(m, r->err, r->err_size);
}

/* ---- the outline: the top-level object walked here, its values parsed by json-c ---- */

struct outline {
	const char *text;
	size_t len, at;
	struct json_tokener *member_tok;	/* a member's value, one level down */
	struct json_tokener *entry_tok;		/* an entry of the files array, two down */
	char *err;
	size_t err_size;
};

static void outline_skip_ws(struct outline *o)
{
	while (o->at < o->len && strchr(" \t\r\n", o->text[o->at]) && o->text[o->at])
		o->at++;
}

/*
 * A structural character expected at the current byte and not there, said
 * as json-c says it over a whole document: a byte that is not ASCII is bad
 * UTF-8 before it is anything else.
 */
static int outline_expected(struct outline *o, enum json_tokener_error e)
{
	if (o->at < o->len && (unsigned char)o->text[o->at] >= 0x80)
		e = json_tokener_error_parse_utf8_string;
	bci_message(o->err, o->err_size, "bad JSON at byte %zu: %s", o->at,
		    o->at == o->len ? "unexpected end of text" : json_tokener_error_desc(e));
	return -EINVAL;
}

/*
 * Where the value at the current byte ends: a string to its closing quote, an
 * object or array to its matching bracket (strings skipped), anything else
 * (a number, a literal) to the next separator. json-c judges what is inside.
 */
static size_t outline_extent(const struct outline *o)
{
	size_t at = o->at, depth = 0;
	bool in_string = false;

	if (at < o->len && !strchr("\"{[", o->text[at])) {
		while (at < o->len && !strchr(",:]} \t\r\n{[\"", o->text[at]))
			at++;
		return at - o->at;
	}
	for (; at < o->len; at++) {
		char c = o->text[at];

		if (in_string) {
			if (c == '\\')
				at++;
			else if (c == '"')
				in_string = false;
			else
				continue;
			if (in_string || depth)
				continue;
			return at + 1 - o->at;
		}
		if (c == '"')
			in_string = true;
		else if (c == '{' || c == '[')
			depth++;
		else if ((c == '}' || c == ']') && depth && --depth == 0)
			return at + 1 - o->at;
	}
	return o->len - o->at;
}

/* One JSON value at the current byte (NULL for null), *@out the caller's; the next byte after. */
static int outline_value(struct outline *o, struct json_tokener *tok, struct json_object **out)
{
	size_t extent = outline_extent(o);
	struct json_object *value;
	enum json_tokener_error e;
	char *copy;

	/*
	 * Strict json-c refuses text after a value, and keeps a number at the
	 * end of its input waiting for more: it gets the value alone, NUL-ended.
	 */
	copy = malloc(extent + 1);
	if (!copy)
		return -ENOMEM;
	memcpy(copy, o->text + o->at, extent);
	copy[extent] = '\0';
	json_tokener_reset(tok);
	value = json_tokener_parse_ex(tok, copy, (int)extent + 1);
	e = json_tokener_get_error(tok);
	free(copy);
	/* A JSON null is a NULL object. */
	if (e != json_tokener_success) {
		size_t end = json_tokener_get_parse_end(tok);

		/*
		 * Short of its end: at the end of the text, as json-c says it
		 * over a whole document; else at the separator that cut it.
		 */
		if (e == json_tokener_continue || e == json_tokener_error_parse_eof) {
			e = o->at + extent == o->len ? json_tokener_continue
						     : json_tokener_error_parse_unexpected;
			end = extent;
		}
		bci_message(o->err, o->err_size, "bad JSON at byte %zu: %s",
			    o->at + (end < extent ? end : extent),
			    e == json_tokener_continue ? "unexpected end of text"
						       : json_tokener_error_desc(e));
		json_object_put(value);
		return -EINVAL;
	}
	o->at += extent;
	*out = value;
	return 0;
}

/*
 * The fast path for an entry as bci_manifest_write() makes it:
 * {"path": "<printable ASCII, no escape>", "size": <digits>, "sha256": "<64 such>"}
 * with any JSON whitespace. json-c would read exactly these values from
 * exactly this text, for a fifth of the time; any other text (escapes, UTF-8,
 * another order, a fraction, anything wrong) goes to json-c and the checks.
 * 1 and the entry appended to @m, 0 when the text is not of that shape.
 */
static bool fast_token(const struct outline *o, size_t *at, const char *token)
{
	size_t n = strlen(token);

	while (*at < o->len && strchr(" \t\r\n", o->text[*at]) && o->text[*at])
		(*at)++;
	if (o->len - *at < n || memcmp(o->text + *at, token, n))
		return false;
	*at += n;
	return true;
}

static bool fast_string(const struct outline *o, size_t *at, size_t *start, size_t *len)
{
	size_t i;

	if (!fast_token(o, at, "\""))
		return false;
	for (i = *at; i < o->len && o->text[i] != '"'; i++)
		if (o->text[i] < 0x20 || o->text[i] > 0x7e || o->text[i] == '\\')
			return false;
	if (i == o->len)
		return false;
	*start = *at;
	*len = i - *at;
	*at = i + 1;
	return true;
}

static int entry_fast(struct outline *o, struct bci_manifest *m)
{
	size_t at = o->at, path, path_len, hash, hash_len, digits = 0;
	struct bci_manifest_file *file;
	uint64_t size = 0;

	if (!fast_token(o, &at, "{") || !fast_token(o, &at, "\"path\"") || !fast_token(o, &at, ":") ||
	    !fast_string(o, &at, &path, &path_len) || !fast_token(o, &at, ",") ||
	    !fast_token(o, &at, "\"size\"") || !fast_token(o, &at, ":") || !fast_token(o, &at, ""))
		return 0;
	/* An integer as strict JSON writes it, small enough to need no range check. */
	while (at + digits < o->len && o->text[at + digits] >= '0' && o->text[at + digits] <= '9') {
		size = size * 10 + (uint64_t)(o->text[at + digits] - '0');
		if (++digits > 15)
			return 0;
	}
	if (!digits || (digits > 1 && o->text[at] == '0'))
		return 0;
	at += digits;
	if (!fast_token(o, &at, ",") || !fast_token(o, &at, "\"sha256\"") || !fast_token(o, &at, ":") ||
	    !fast_string(o, &at, &hash, &hash_len) || hash_len != BCI_SHA256_HEX_LEN ||
	    !fast_token(o, &at, "}"))
		return 0;
	file = array_grow(&m->files, &m->file_count, sizeof(*file));
	if (!file)
		return -ENOMEM;
	file->path = strndup(o->text + path, path_len);
	if (!file->path)
		return -ENOMEM;
	file->size = size;
	memcpy(file->sha256, o->text + hash, BCI_SHA256_HEX_LEN);
	file->sha256[BCI_SHA256_HEX_LEN] = '\0';
	o->at = at;
	return 1;
}

/* The files array at the current '[: each entry read into @m as it comes. */
static int outline_files(struct outline *o, struct reader *r, struct bci_manifest *m)
{
	struct reader entry = { .err = r->files_err, .err_size = sizeof(r->files_err) };
	size_t i = 0;
	int ret;

	/* A second "files" member replaces the first, as a JSON object's keys do. */
	for (size_t k = 0; k < m->file_count; k++)
		free(m->files[k].path);
	free(m->files);
	m->files = NULL;
	m->file_count = 0;
	r->files_streamed = true;
	r->files_ret = 0;
	o->at++;
	outline_skip_ws(o);
	if (o->at < o->len && o->text[o->at] == ']') {
		o->at++;
		return 0;
	}
	for (;; i++) {
		struct json_object *f;

		outline_skip_ws(o);
		ret = r->files_ret == 0 ? entry_fast(o, m) : 0;
		if (ret < 0)
			return ret;
		if (ret == 1)
			goto next;
		ret = outline_value(o, o->entry_tok, &f);
		if (ret < 0)
			return ret;
		/* The first bad entry is the error; the rest is still read for bad JSON. */
		if (r->files_ret == 0) {
			r->files_ret = read_file_entry(&entry, f, i, m);
			if (r->files_ret == -ENOMEM) {
				json_object_put(f);
				return -ENOMEM;
			}
		}
		json_object_put(f);
next:
		outline_skip_ws(o);
		if (o->at < o->len && o->text[o->at] == ',') {
			o->at++;
			continue;
		}
		if (o->at < o->len && o->text[o->at] == ']') {
			o->at++;
			return 0;
		}
		return outline_expected(o, json_tokener_error_parse_array);
	}
}

/*
 * The top-level object at the current '{' into @root (every member but an
 * array "files", which goes to @m with an empty array left in its place).
 */
static int outline_object(struct outline *o, struct reader *r, struct json_object *root,
			  struct bci_manifest *m)
{
	o->at++;
	outline_skip_ws(o);
	if (o->at < o->len && o->text[o->at] == '}') {
		o->at++;
		return 0;
	}
	for (;;) {
		struct json_object *key, *value;
		int ret;

		outline_skip_ws(o);
		if (o->at >= o->len || o->text[o->at] != '"')
			return outline_expected(o, json_tokener_error_parse_object_key_name);
		ret = outline_value(o, o->member_tok, &key);
		if (ret < 0)
			return ret;
		outline_skip_ws(o);
		if (o->at >= o->len || o->text[o->at] != ':') {
			json_object_put(key);
			return outline_expected(o, json_tokener_error_parse_object_key_sep);
		}
		o->at++;
		outline_skip_ws(o);
		if (!strcmp(json_object_get_string(key), "files") && o->at < o->len &&
		    o->text[o->at] == '[') {
			ret = outline_files(o, r, m);
			value = ret < 0 ? NULL : json_object_new_array();
			if (ret == 0 && !value)
				ret = -ENOMEM;
		} else {
			ret = outline_value(o, o->member_tok, &value);
		}
		if (ret == 0 && json_object_object_add(root, json_object_get_string(key), value) < 0) {
			json_object_put(value);
			ret = -ENOMEM;
		}
		json_object_put(key);
		if (ret < 0)
			return ret;
		outline_skip_ws(o);
		if (o->at < o->len && o->text[o->at] == ',') {
			o->at++;
			continue;
		}
		if (o->at < o->len && o->text[o->at] == '}') {
			o->at++;
			return 0;
		}
		return outline_expected(o, json_tokener_error_parse_object_value_sep);
	}
}

/* Anything but an object at the top: json-c's whole-document parse says what is wrong. */
static int parse_whole(const char *text, size_t len, struct json_object **out, char *err,
		       size_t err_size)
{
	struct json_tokener *tok = json_tokener_new_ex(MANIFEST_DEPTH);
	struct outline o = { .text = text, .len = len, .err = err, .err_size = err_size };
	int ret;

	if (!tok)
		return -ENOMEM;
	json_tokener_set_flags(tok, JSON_TOKENER_STRICT | JSON_TOKENER_VALIDATE_UTF8);
	ret = outline_value(&o, tok, out);
	json_tokener_free(tok);
	if (ret == 0)
		outline_skip_ws(&o);
	if (ret == 0 && o.at < len) {
		bci_message(err, err_size, "bad JSON at byte %zu: %s", o.at,
			    json_tokener_error_desc(json_tokener_error_parse_unexpected));
		json_object_put(*out);
		*out = NULL;
		ret = -EINVAL;
	}
	return ret;
}

int bci_manifest_parse(const char *text, size_t len, struct bci_manifest **out, char *err,
		       size_t err_size)
{
	struct reader r = { .err = err, .err_size = err_size };
	struct outline o = { .text = text, .len = len, .err = err, .err_size = err_size };
	struct json_object *root = NULL;
	struct bci_manifest *m;
	int ret;

	if (memchr(text, '\0', len)) {
		bci_message(err, err_size, "a NUL byte in the JSON text");
		return -EINVAL;
	}
	if (len > INT_MAX) {
		bci_message(err, err_size, "%zu bytes is too large for a manifest", len);
		return -EFBIG;
	}
	m = bci_manifest_new();
	if (!m)
		return -ENOMEM;
	outline_skip_ws(&o);
	if (o.at >= len || text[o.at] != '{') {
		ret = parse_whole(text, len, &root, err, err_size);
		goto read;
	}
	/* The root is one level: its values may nest MANIFEST_DEPTH - 1, the files' entries - 2. */
	o.member_tok = json_tokener_new_ex(MANIFEST_DEPTH - 1);
	o.entry_tok = json_tokener_new_ex(MANIFEST_DEPTH - 2);
	root = json_object_new_object();
	if (!o.member_tok || !o.entry_tok || !root) {
		ret = -ENOMEM;
		goto done;
	}
	json_tokener_set_flags(o.member_tok, JSON_TOKENER_STRICT | JSON_TOKENER_VALIDATE_UTF8);
	json_tokener_set_flags(o.entry_tok, JSON_TOKENER_STRICT | JSON_TOKENER_VALIDATE_UTF8);
	ret = outline_object(&o, &r, root, m);
	if (ret == 0) {
		outline_skip_ws(&o);
		if (o.at < len)
			ret = outline_expected(&o, json_tokener_error_parse_unexpected);
	}
read:
	if (ret == 0)
		ret = read_manifest(&r, root, m);
done:
	if (o.member_tok)
		json_tokener_free(o.member_tok);
	if (o.entry_tok)
		json_tokener_free(o.entry_tok);
	json_object_put(root);
	if (ret < 0) {
		if (ret == -ENOMEM)
			bci_message(err, err_size, "out of memory");
		bci_manifest_free(m);
		return ret;
	}
	*out = m;
	return 0;
}
