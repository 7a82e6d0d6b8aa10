// SPDX-License-Identifier: MIT
/* A boot's machine environment: environment.txt and kernel.config (format in machine_env.h). */
#include "machine_env.h"

#include "fsutil.h"
#include "message.h"
#include "strv.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static const char *const field_keys[BCI_ENV_FIELD_COUNT] = {
	[BCI_ENV_DMI_SYS_VENDOR] = "dmi.sys_vendor",
	[BCI_ENV_DMI_PRODUCT_NAME] = "dmi.product_name",
	[BCI_ENV_DMI_PRODUCT_VERSION] = "dmi.product_version",
	[BCI_ENV_DMI_BOARD_VENDOR] = "dmi.board_vendor",
	[BCI_ENV_DMI_BOARD_NAME] = "dmi.board_name",
	[BCI_ENV_DMI_BOARD_VERSION] = "dmi.board_version",
	[BCI_ENV_DMI_BIOS_VENDOR] = "dmi.bios_vendor",
	[BCI_ENV_DMI_BIOS_VERSION] = "dmi.bios_version",
	[BCI_ENV_DMI_BIOS_DATE] = "dmi.bios_date",
	[BCI_ENV_CPU_MODEL] = "cpu.model",
	[BCI_ENV_CPU_COUNT] = "cpu.count",
	[BCI_ENV_MEMORY_KIB] = "memory.kib",
	[BCI_ENV_KERNEL_RELEASE] = "kernel.release",
	[BCI_ENV_KERNEL_CMDLINE] = "kernel.cmdline",
	[BCI_ENV_KERNEL_CONFIG] = "kernel.config",
};

const char *bci_machine_env_key(enum bci_machine_env_field field)
{
	return (unsigned)field < BCI_ENV_FIELD_COUNT ? field_keys[field] : NULL;
}

int bci_machine_env_new(struct bci_machine_env **out)
{
	*out = calloc(1, sizeof(**out));
	return *out ? 0 : -ENOMEM;
}

void bci_machine_env_free(struct bci_machine_env *env)
{
	if (!env)
		return;
	for (size_t i = 0; i < BCI_ENV_FIELD_COUNT; i++)
		free(env->fields[i]);
	for (size_t i = 0; i < env->pci_count; i++) {
		free(env->pci[i].slot);
		free(env->pci[i].driver);
	}
	free(env->pci);
	for (size_t i = 0; i < env->module_count; i++)
		free(env->modules[i]);
	free(env->modules);
	for (size_t i = 0; i < env->firmware_count; i++)
		free(env->firmware[i].name);
	free(env->firmware);
	free(env);
}

/* A decimal number without sign or leading zero, at most 18 digits. */
static bool decimal_valid(const char *text)
{
	size_t len = strspn(text, "0123456789");

	return len > 0 && len <= 18 && text[len] == '\0' && (text[0] != '0' || len == 1);
}

/* What is wrong with @value for @field, or NULL when it is fine. */
static const char *field_problem(enum bci_machine_env_field field, const char *value)
{
	if ((field == BCI_ENV_CPU_COUNT || field == BCI_ENV_MEMORY_KIB) && !decimal_valid(value))
		return "not a decimal number";
	if (field == BCI_ENV_KERNEL_CONFIG && strcmp(value, BCI_MACHINE_ENV_CONFIG_FILE) != 0)
		return "kernel.config names another file than kernel.config";
	return NULL;
}

int bci_machine_env_set(struct bci_machine_env *env, enum bci_machine_env_field field,
			const char *value)
{
	char *copy;

	if ((unsigned)field >= BCI_ENV_FIELD_COUNT || (value && field_problem(field, value)))
		return -EINVAL;
	copy = value ? strdup(value) : NULL;
	if (value && !copy)
		return -ENOMEM;
	free(env->fields[field]);
	env->fields[field] = copy;
	return 0;
}

/*
 * Makes room for one more element of @size in the array at @items holding
 * @count: the capacity is the next power of two, so it grows only when @count
 * is one.
 */
static int grow(void *items, size_t count, size_t size)
{
	void **array = items;
	void *bigger;

	if (count > ((size_t)1 << 24))
		return -E2BIG;
	if (count & (count - 1))
		return 0;
	bigger = realloc(*array, (count ? count * 2 : 1) * size);
	if (!bigger)
		return -ENOMEM;
	*array = bigger;
	return 0;
}

static bool slot_valid(const char *slot)
{
	/* The kernel's names: DDDD:BB:SS.F (a domain may have more digits). */
	size_t len = strlen(slot);

	if (len < 12 || len > 64)
		return false;
	for (size_t i = 0; i < len; i++)
		if (!strchr("0123456789abcdef:.", slot[i]))
			return false;
	return slot[len - 2] == '.' && slot[len - 5] == ':' && slot[len - 8] == ':';
}

static bool word_valid(const char *word)
{
	if (!*word || strlen(word) > 255)
		return false;
	for (; *word; word++)
		if ((unsigned char)*word <= ' ' || *word == 0x7f || *word == '\\')
			return false;
	return true;
}

int bci_machine_env_add_pci(struct bci_machine_env *env, const struct bci_pci_function *function)
{
	struct bci_pci_function *copy;
	int ret;

	if (!function->slot || !slot_valid(function->slot) || function->vendor > 0xffff ||
	    function->device > 0xffff || function->subsystem_vendor > 0xffff ||
	    function->subsystem_device > 0xffff || function->class_code > 0xffffff ||
	    function->revision > 0xff ||
	    (function->driver && (!*function->driver || strlen(function->driver) > 255 ||
				  strcmp(function->driver, "-") == 0)))
		return -EINVAL;
	ret = grow(&env->pci, env->pci_count, sizeof(*env->pci));
	if (ret < 0)
		return ret;
	copy = &env->pci[env->pci_count];
	*copy = *function;
	copy->slot = strdup(function->slot);
	copy->driver = function->driver ? strdup(function->driver) : NULL;
	if (!copy->slot || (function->driver && !copy->driver)) {
		free(copy->slot);
		free(copy->driver);
		return -ENOMEM;
	}
	env->pci_count++;
	return 0;
}

int bci_machine_env_add_module(struct bci_machine_env *env, const char *name)
{
	char *copy;
	int ret;

	if (!word_valid(name))
		return -EINVAL;
	ret = grow(&env->modules, env->module_count, sizeof(*env->modules));
	if (ret < 0)
		return ret;
	copy = strdup(name);
	if (!copy)
		return -ENOMEM;
	env->modules[env->module_count++] = copy;
	return 0;
}

int bci_machine_env_add_firmware(struct bci_machine_env *env, const char *name, int error)
{
	char *copy;
	int ret;

	if (!*name || error > 0 || error < -4095)
		return -EINVAL;
	for (size_t i = 0; i < env->firmware_count; i++) {
		if (strcmp(env->firmware[i].name, name) == 0) {
			env->firmware[i].error = error;
			return 0;
		}
	}
	ret = grow(&env->firmware, env->firmware_count, sizeof(*env->firmware));
	if (ret < 0)
		return ret;
	copy = strdup(name);
	if (!copy)
		return -ENOMEM;
	env->firmware[env->firmware_count].name = copy;
	env->firmware[env->firmware_count].error = error;
	env->firmware_count++;
	return 0;
}

/* ---- writer ---- */

struct text {
	char *buf;
	size_t len, cap;
	int error;
};

static void text_reserve(struct text *t, size_t more)
{
	char *bigger;
	size_t cap;

	if (t->error || t->len + more + 1 <= t->cap)
		return;
	cap = t->cap ? t->cap : 1024;
	while (cap < t->len + more + 1)
		cap *= 2;
	bigger = realloc(t->buf, cap);
	if (!bigger) {
		t->error = -ENOMEM;
		return;
	}
	t->buf = bigger;
	t->cap = cap;
}

static void text_add(struct text *t, const char *data, size_t len)
{
	text_reserve(t, len);
	if (t->error)
		return;
	memcpy(t->buf + t->len, data, len);
	t->len += len;
	t->buf[t->len] = '\0';
}

static void text_printf(struct text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void text_printf(struct text *t, const char *fmt, ...)
{
	char line[512];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	/* Callers print only bounded words and numbers. */
	text_add(t, line, n < 0 ? 0 : (size_t)n < sizeof(line) ? (size_t)n : sizeof(line) - 1);
}

static void text_escaped(struct text *t, const char *value)
{
	static const char hex[] = "0123456789abcdef";

	for (const unsigned char *p = (const unsigned char *)value; *p; p++) {
		char esc[4] = { '\\', 0, 0, 0 };
		size_t n = 2;

		if (*p == '\\')
			esc[1] = '\\';
		else if (*p == '\n')
			esc[1] = 'n';
		else if (*p == '\r')
			esc[1] = 'r';
		else if (*p == '\t')
			esc[1] = 't';
		else if (*p < 0x20 || *p == 0x7f) {
			esc[1] = 'x';
			esc[2] = hex[*p >> 4];
			esc[3] = hex[*p & 15];
			n = 4;
		} else {
			text_add(t, (const char *)p, 1);
			continue;
		}
		text_add(t, esc, n);
	}
}

int bci_machine_env_format(const struct bci_machine_env *env, char **text, size_t *len)
{
	struct text t = { 0 };

	text_printf(&t, "format %d\n", BCI_MACHINE_ENV_FORMAT);
	for (size_t i = 0; i < BCI_ENV_FIELD_COUNT; i++) {
		if (!env->fields[i])
			continue;
		text_printf(&t, "%s ", field_keys[i]);
		text_escaped(&t, env->fields[i]);
		text_add(&t, "\n", 1);
	}
	for (size_t i = 0; i < env->pci_count; i++) {
		const struct bci_pci_function *f = &env->pci[i];
		text_printf(&t, "pci %s %04x:%04x %04x:%04x %06x %02x ", f->slot, f->vendor,
			    f->device, f->subsystem_vendor, f->subsystem_device, f->class_code,
			    f->revision);
		/* Driver names are free text ("i6300ESB timer"): escaped, the rest of the line. */
		text_escaped(&t, f->driver ? f->driver : "-");
		text_add(&t, "\n", 1);
	}
	for (size_t i = 0; i < env->module_count; i++)
		text_printf(&t, "module %s\n", env->modules[i]);
	for (size_t i = 0; i < env->firmware_count; i++) {
		if (env->firmware[i].error)
			text_printf(&t, "firmware %d ", env->firmware[i].error);
		else
			text_printf(&t, "firmware ok ");
		text_escaped(&t, env->firmware[i].name);
		text_add(&t, "\n", 1);
	}
	if (t.error) {
		free(t.buf);
		return t.error;
	}
	*text = t.buf;
	*len = t.len;
	return 0;
}

static int write_joined(const char *dir, const char *name, const void *data, size_t len,
			char *err, size_t err_size)
{
	char path[PATH_MAX];
	int ret;

	if (snprintf(path, sizeof(path), "%s/%s", dir, name) >= (int)sizeof(path)) {
		bci_message(err, err_size, "%s/%s: path too long", dir, name);
		return -ENAMETOOLONG;
	}
	ret = bci_write_file_atomic(path, data, len, 0644);
	if (ret < 0)
		bci_message(err, err_size, "cannot write %s: %s", path, strerror(-ret));
	return ret;
}

int bci_machine_env_write(const char *dir, const struct bci_machine_env *env,
			  const char *kernel_config, size_t kernel_config_len,
			  char *err, size_t err_size)
{
	const char *named = env->fields[BCI_ENV_KERNEL_CONFIG];
	size_t len;
	char *text;
	int ret;

	if (!kernel_config != !named || (named && strcmp(named, BCI_MACHINE_ENV_CONFIG_FILE) != 0)) {
		bci_message(err, err_size, "%s: kernel.config must name %s exactly when a .config is written",
			    dir, BCI_MACHINE_ENV_CONFIG_FILE);
		return -EINVAL;
	}
	if (kernel_config) {
		ret = write_joined(dir, BCI_MACHINE_ENV_CONFIG_FILE, kernel_config, kernel_config_len,
				   err, err_size);
		if (ret < 0)
			return ret;
	}
	ret = bci_machine_env_format(env, &text, &len);
	if (ret < 0) {
		bci_message(err, err_size, "%s/%s: %s", dir, BCI_MACHINE_ENV_FILE, strerror(-ret));
		return ret;
	}
	ret = write_joined(dir, BCI_MACHINE_ENV_FILE, text, len, err, err_size);
	free(text);
	return ret;
}

/* ---- reader ---- */

/* Unescapes @len bytes of @value into a new string; NULL with *@bad set on a bad escape. */
static char *unescape(const char *value, size_t len, const char **bad)
{
	char *out = malloc(len + 1), *o = out;

	*bad = NULL;
	if (!out)
		return NULL;
	for (size_t i = 0; i < len; i++) {
		char c = value[i];
		if (c == '\0' || (c != '\\' && ((unsigned char)c < 0x20 || c == 0x7f))) {
			*bad = "a control byte not escaped";
			goto fail;
		}
		if (c != '\\') {
			*o++ = c;
			continue;
		}
		if (++i == len) {
			*bad = "a backslash at the end of the line";
			goto fail;
		}
		switch (value[i]) {
		case '\\': *o++ = '\\'; break;
		case 'n': *o++ = '\n'; break;
		case 'r': *o++ = '\r'; break;
		case 't': *o++ = '\t'; break;
		case 'x': {
			int high = i + 2 < len ? bci_hex_digit(value[i + 1]) : -1;
			int low = high >= 0 ? bci_hex_digit(value[i + 2]) : -1;
			if (low < 0 || (high == 0 && low == 0)) {
				*bad = "\\x needs two hex digits, not 00";
				goto fail;
			}
			*o++ = (char)(high << 4 | low);
			i += 2;
			break;
		}
		default:
			*bad = "an unknown escape (\\\\ \\n \\r \\t \\xHH)";
			goto fail;
		}
	}
	*o = '\0';
	return out;
fail:
	free(out);
	return NULL;
}

/* A hex number of exactly @digits digits ending at @end (NUL or ':'); -1 when not. */
static long hex_exact(const char *text, size_t digits, char end)
{
	long value = 0;

	for (size_t i = 0; i < digits; i++) {
		int d = bci_hex_digit(text[i]);
		if (d < 0 || (text[i] >= 'A' && text[i] <= 'F'))
			return -1;
		value = value << 4 | d;
	}
	return text[digits] == end ? value : -1;
}

/* @value: the unescaped rest of a pci line; the driver is all that follows the fifth space. */
static int parse_pci(char *value, struct bci_pci_function *f)
{
	char *words[6];
	long parts[6];

	words[0] = value;
	for (size_t n = 1; n < 6; n++) {
		char *space = strchr(words[n - 1], ' ');
		if (!space)
			return -EINVAL;
		*space = '\0';
		words[n] = space + 1;
	}
	if (!slot_valid(words[0]))
		return -EINVAL;
	parts[0] = hex_exact(words[1], 4, ':');
	parts[1] = parts[0] < 0 ? -1 : hex_exact(words[1] + 5, 4, '\0');
	parts[2] = hex_exact(words[2], 4, ':');
	parts[3] = parts[2] < 0 ? -1 : hex_exact(words[2] + 5, 4, '\0');
	parts[4] = hex_exact(words[3], 6, '\0');
	parts[5] = hex_exact(words[4], 2, '\0');
	for (size_t i = 0; i < 6; i++)
		if (parts[i] < 0)
			return -EINVAL;
	if (!words[5][0])
		return -EINVAL;
	*f = (struct bci_pci_function){
		.slot = words[0],
		.vendor = (unsigned)parts[0],
		.device = (unsigned)parts[1],
		.subsystem_vendor = (unsigned)parts[2],
		.subsystem_device = (unsigned)parts[3],
		.class_code = (unsigned)parts[4],
		.revision = (unsigned)parts[5],
		.driver = strcmp(words[5], "-") == 0 ? NULL : words[5],
	};
	return 0;
}

/* "ok" or -1..-4095 without leading zeros: the error of a firmware line. */
static int parse_firmware_result(const char *word, size_t len, int *error)
{
	if (len == 2 && memcmp(word, "ok", 2) == 0) {
		*error = 0;
		return 0;
	}
	if (len < 2 || len > 5 || word[0] != '-' || word[1] == '0')
		return -EINVAL;
	*error = 0;
	for (size_t i = 1; i < len; i++) {
		if (word[i] < '0' || word[i] > '9')
			return -EINVAL;
		*error = *error * 10 + (word[i] - '0');
	}
	if (*error > 4095)
		return -EINVAL;
	*error = -*error;
	return 0;
}

static int parse_line(struct bci_machine_env *env, const char *line, size_t len,
		      const char **problem)
{
	const char *space = memchr(line, ' ', len), *bad;
	size_t key_len = space ? (size_t)(space - line) : len;
	const char *raw = space ? space + 1 : line + len;
	size_t raw_len = len - (size_t)(raw - line);
	char *value;
	int ret = 0;

	if (!space) {
		*problem = "a key without a value";
		return -EINVAL;
	}
	value = unescape(raw, raw_len, &bad);
	if (!value) {
		*problem = bad ? bad : "out of memory";
		return bad ? -EINVAL : -ENOMEM;
	}
	for (size_t i = 0; i < BCI_ENV_FIELD_COUNT; i++) {
		if (strlen(field_keys[i]) != key_len || memcmp(field_keys[i], line, key_len) != 0)
			continue;
		if (env->fields[i]) {
			*problem = "a key given twice";
			ret = -EINVAL;
		} else if ((*problem = field_problem(i, value))) {
			ret = -EINVAL;
		} else {
			env->fields[i] = value;
			return 0;
		}
		free(value);
		return ret;
	}
	if (key_len == 3 && memcmp(line, "pci", 3) == 0) {
		struct bci_pci_function f;
		ret = parse_pci(value, &f);
		if (ret < 0)
			*problem = "not SLOT VENDOR:DEVICE SUBVENDOR:SUBDEVICE CLASS REVISION DRIVER";
		else if ((ret = bci_machine_env_add_pci(env, &f)) < 0)
			*problem = "a bad PCI function";
	} else if (key_len == 6 && memcmp(line, "module", 6) == 0) {
		ret = bci_machine_env_add_module(env, value);
		if (ret < 0)
			*problem = "a module name with white space, a backslash or none";
	} else if (key_len == 8 && memcmp(line, "firmware", 8) == 0) {
		const char *name = memchr(value, ' ', strlen(value));
		int error;
		/* The result is a plain word, so it is the same escaped or not. */
		if (!name || parse_firmware_result(value, (size_t)(name - value), &error) < 0 ||
		    !name[1]) {
			*problem = "not `firmware ok|-ERRNO NAME`";
			ret = -EINVAL;
		} else {
			ret = bci_machine_env_add_firmware(env, name + 1, error);
			if (ret < 0)
				*problem = "a bad firmware request";
		}
	} else {
		*problem = "an unknown key";
		ret = -EINVAL;
	}
	free(value);
	return ret;
}

int bci_machine_env_parse(const char *name, const char *text, size_t len,
			  struct bci_machine_env **out, char *err, size_t err_size)
{
	static const char first[] = "format 1";
	struct bci_machine_env *env;
	size_t number = 0, start = 0;
	int ret;

	ret = bci_machine_env_new(&env);
	if (ret < 0) {
		bci_message(err, err_size, "%s: out of memory", name);
		return ret;
	}
	while (start < len) {
		const char *line = text + start, *problem = NULL;
		const char *newline = memchr(line, '\n', len - start);
		size_t line_len = newline ? (size_t)(newline - line) : len - start;

		number++;
		start += line_len + 1;
		if (!newline) {
			bci_message(err, err_size, "%s:%zu: the last line has no newline (cut short?)",
				    name, number);
			ret = -EINVAL;
			goto fail;
		}
		if (number == 1) {
			if (line_len != sizeof(first) - 1 || memcmp(line, first, line_len) != 0) {
				bci_message(err, err_size, "%s:1: not `%s`: a format this reader does "
					    "not know", name, first);
				ret = -EINVAL;
				goto fail;
			}
			continue;
		}
		if (line_len > 0 && line[0] == '#')
			continue;
		ret = parse_line(env, line, line_len, &problem);
		if (ret < 0) {
			bci_message(err, err_size, "%s:%zu: %s: %.*s", name, number, problem,
				    (int)(line_len > 80 ? 80 : line_len), line);
			goto fail;
		}
	}
	if (number == 0) {
		bci_message(err, err_size, "%s: empty", name);
		ret = -EINVAL;
		goto fail;
	}
	*out = env;
	return 0;
fail:
	bci_machine_env_free(env);
	return ret;
}

int bci_machine_env_read(const char *dir, struct bci_machine_env **out, char *err,
			 size_t err_size)
{
	char path[PATH_MAX], *text;
	struct stat st;
	size_t len;
	int ret;

	if (snprintf(path, sizeof(path), "%s/%s", dir, BCI_MACHINE_ENV_FILE) >= (int)sizeof(path)) {
		bci_message(err, err_size, "%s: path too long", dir);
		return -ENAMETOOLONG;
	}
	ret = bci_read_file(path, &text, &len, BCI_MACHINE_ENV_MAX_SIZE);
	if (ret < 0) {
		bci_message(err, err_size, "cannot read %s: %s", path, strerror(-ret));
		return ret;
	}
	ret = bci_machine_env_parse(path, text, len, out, err, err_size);
	free(text);
	if (ret < 0 || !(*out)->fields[BCI_ENV_KERNEL_CONFIG])
		return ret;
	snprintf(path, sizeof(path), "%s/%s", dir, BCI_MACHINE_ENV_CONFIG_FILE);
	if (lstat(path, &st) < 0)
		ret = -errno;
	else if (!S_ISREG(st.st_mode))
		ret = -EINVAL;
	if (ret == 0)
		return 0;
	bci_message(err, err_size, "%s/%s names %s, which is not a regular file there: %s", dir,
		    BCI_MACHINE_ENV_FILE, BCI_MACHINE_ENV_CONFIG_FILE, strerror(-ret));
	bci_machine_env_free(*out);
	*out = NULL;
	return ret;
}

/* ---- the kernel log's firmware requests ---- */

/* Finds @needle in @len bytes of @hay; its offset or -1. */
static long find(const char *hay, size_t len, const char *needle)
{
	size_t n = strlen(needle);

	for (size_t i = 0; n <= len && i <= len - n; i++)
		if (memcmp(hay + i, needle, n) == 0)
			return (long)i;
	return -1;
}

/* A firmware name: printable bytes without space, 1..@size-1 of them. */
static int copy_name(const char *from, size_t len, char *name, size_t size)
{
	if (len == 0 || len >= size)
		return 0;
	for (size_t i = 0; i < len; i++)
		if ((unsigned char)from[i] <= ' ' || from[i] == 0x7f)
			return 0;
	memcpy(name, from, len);
	name[len] = '\0';
	return 1;
}

/* Parses "-N" or "N" (the kernel prints -2) at @p into a -errno; 0 when not a number. */
static int error_number(const char *p, size_t len)
{
	size_t i = 0;
	int value = 0;

	if (i < len && p[i] == '-')
		i++;
	if (i == len || p[i] < '0' || p[i] > '9')
		return 0;
	for (; i < len && p[i] >= '0' && p[i] <= '9' && value < 4096; i++)
		value = value * 10 + (p[i] - '0');
	return value > 0 && value < 4096 ? -value : 0;
}

/* The length of the word at @p (up to white space or @len). */
static size_t word_length(const char *p, size_t len)
{
	size_t n = 0;

	while (n < len && p[n] != ' ' && p[n] != '\n' && p[n] != '\t')
		n++;
	return n;
}

int bci_machine_env_firmware_line(const char *line, size_t len, char *name, size_t size,
				  int *error)
{
	static const char loaded[] = "firmware: direct-loading firmware ";
	static const char direct[] = "Direct firmware load for ";
	static const char direct_end[] = " failed with error ";
	static const char failed[] = "firmware: failed to load ";
	const char *p;
	size_t rest, n;
	long at;

	if ((at = find(line, len, loaded)) >= 0) {
		p = line + at + sizeof(loaded) - 1;
		rest = len - (size_t)(p - line);
		*error = 0;
		return copy_name(p, word_length(p, rest), name, size);
	}
	if ((at = find(line, len, direct)) >= 0) {
		p = line + at + sizeof(direct) - 1;
		rest = len - (size_t)(p - line);
		at = find(p, rest, direct_end);
		if (at < 0)
			return 0;
		n = (size_t)at;
		*error = error_number(p + n + sizeof(direct_end) - 1, rest - n - (sizeof(direct_end) - 1));
		return *error < 0 ? copy_name(p, n, name, size) : 0;
	}
	if ((at = find(line, len, failed)) >= 0) {
		p = line + at + sizeof(failed) - 1;
		rest = len - (size_t)(p - line);
		n = word_length(p, rest);
		if (n + 2 > rest || p[n] != ' ' || p[n + 1] != '(')
			return 0;
		*error = error_number(p + n + 2, rest - n - 2);
		return *error < 0 ? copy_name(p, n, name, size) : 0;
	}
	return 0;
}
