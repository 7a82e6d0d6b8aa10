// SPDX-License-Identifier: MIT
/* The deploy plan's reader and writer (deploy_plan.h). */
#include "deploy_plan.h"

#include "config.h"
#include "executor_keys.h"
#include "message.h"
#include "sha256.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum plan_key {
	KEY_MACHINE,
	KEY_KNOWN_GOOD,
	KEY_IMAGE,
	KEY_IMAGE_SIZE,
	KEY_IMAGE_SHA256,
	KEY_DEPLOY_ID,
	KEY_DISK,
	KEY_ESP_PARTITION,
	KEY_LOADER,
	KEY_COUNT,
};

static const char *const key_names[KEY_COUNT] = {
	"machine", "known_good", "image", "image_size", "image_sha256", "deploy_id",
	"disk", "esp_partition", "loader",
};

/* Keys the executor cannot do without; the others have defaults. */
#define REQUIRED_KEYS 6

struct parse_state {
	const char *name;
	struct bci_deploy_plan *plan;
	bool seen[KEY_COUNT];
	char *err;
	size_t err_size;
};

/* A whole number from @min to @max, decimal digits only (no sign, no spaces). */
static bool number_parse(const char *value, unsigned long long min, unsigned long long max,
			 unsigned long long *out)
{
	unsigned long long n = 0;

	if (!*value || strspn(value, "0123456789") != strlen(value) || strlen(value) > 20)
		return false;
	for (const char *p = value; *p; p++) {
		if (n > (max - (unsigned)(*p - '0')) / 10)
			return false;
		n = n * 10 + (unsigned)(*p - '0');
	}
	if (n < min)
		return false;
	*out = n;
	return true;
}

/* /dev/NAME with NAME one name: the deploy writes a whole disk, never a path elsewhere. */
static int disk_check(const char *value, char *why, size_t why_size)
{
	if (strncmp(value, "/dev/", 5)) {
		bci_message(why, why_size, "is not /dev/NAME");
		return -EINVAL;
	}
	return bci_executor_name_check(value + 5, why, why_size);
}

static int key_set(struct parse_state *st, enum plan_key key, const char *value, char *why,
		   size_t why_size)
{
	struct bci_deploy_plan *plan = st->plan;
	unsigned long long n;

	switch (key) {
	case KEY_MACHINE:
	case KEY_KNOWN_GOOD:
	case KEY_DEPLOY_ID:
		if (bci_executor_name_check(value, why, why_size) < 0)
			return -EINVAL;
		snprintf(key == KEY_MACHINE	   ? plan->machine
			 : key == KEY_KNOWN_GOOD ? plan->known_good
						 : plan->deploy_id,
			 BCI_DEPLOY_PLAN_WORD_MAX + 1, "%s", value);
		return 0;
	case KEY_IMAGE:
	case KEY_LOADER:
		if (strlen(value) >= BCI_DEPLOY_PLAN_PATH_MAX) {
			bci_message(why, why_size, "is longer than %d characters",
				    BCI_DEPLOY_PLAN_PATH_MAX - 1);
			return -EINVAL;
		}
		if (bci_executor_image_path_check(value, why, why_size) < 0)
			return -EINVAL;
		snprintf(key == KEY_IMAGE ? plan->image : plan->loader, BCI_DEPLOY_PLAN_PATH_MAX,
			 "%s", value);
		return 0;
	case KEY_IMAGE_SIZE:
		if (!number_parse(value, 1, BCI_DEPLOY_PLAN_SIZE_MAX, &n)) {
			bci_message(why, why_size, "is not a size in bytes from 1 to %llu",
				    BCI_DEPLOY_PLAN_SIZE_MAX);
			return -EINVAL;
		}
		plan->image_size = n;
		return 0;
	case KEY_IMAGE_SHA256:
		if (!bci_sha256_hex_ok(value)) {
			bci_message(why, why_size, "is not 64 lowercase hex digits");
			return -EINVAL;
		}
		memcpy(plan->image_sha256, value, 65);
		return 0;
	case KEY_DISK:
		if (strlen(value) >= BCI_DEPLOY_PLAN_PATH_MAX || disk_check(value, why, why_size) < 0) {
			if (strlen(value) >= BCI_DEPLOY_PLAN_PATH_MAX)
				bci_message(why, why_size, "is too long");
			return -EINVAL;
		}
		snprintf(plan->disk, sizeof(plan->disk), "%s", value);
		return 0;
	case KEY_ESP_PARTITION:
		if (!number_parse(value, 1, 128, &n)) {
			bci_message(why, why_size, "is not a partition number from 1 to 128");
			return -EINVAL;
		}
		plan->esp_partition = (unsigned)n;
		return 0;
	case KEY_COUNT:
		break;
	}
	return -EINVAL;
}

static int entry_parse(const char *key, const char *value, unsigned int line, void *data)
{
	struct parse_state *st = data;
	char why[200];
	int k;

	for (k = 0; k < KEY_COUNT; k++)
		if (!strcmp(key, key_names[k]))
			break;
	if (k == KEY_COUNT) {
		bci_message_at(st->err, st->err_size, st->name, line, "unknown key '%.64s'", key);
		return -EINVAL;
	}
	if (st->seen[k]) {
		bci_message_at(st->err, st->err_size, st->name, line, "%s: given twice", key);
		return -EINVAL;
	}
	if (key_set(st, (enum plan_key)k, value, why, sizeof(why)) < 0) {
		bci_message_at(st->err, st->err_size, st->name, line, "%s: '%.80s' %s", key, value,
			       why);
		return -EINVAL;
	}
	st->seen[k] = true;
	return 0;
}

int bci_deploy_plan_parse(const char *name, const char *text, size_t len,
			  struct bci_deploy_plan *plan, char *err, size_t err_size)
{
	struct parse_state st = { .name = name, .plan = plan, .err = err, .err_size = err_size };
	int ret;

	memset(plan, 0, sizeof(*plan));
	plan->esp_partition = 1;
	snprintf(plan->loader, sizeof(plan->loader), "%s", BCI_DEPLOY_PLAN_LOADER);
	if (len > BCI_DEPLOY_PLAN_TEXT_MAX) {
		bci_message(err, err_size, "%s: %zu bytes, more than a plan's %d", name, len,
			    BCI_DEPLOY_PLAN_TEXT_MAX);
		return -EINVAL;
	}
	ret = bci_kv_parse(name, text, len, entry_parse, &st, err, err_size);
	if (ret < 0)
		return ret;
	for (int k = 0; k < REQUIRED_KEYS; k++) {
		if (!st.seen[k]) {
			bci_message(err, err_size, "%s: %s missing", name, key_names[k]);
			return -EINVAL;
		}
	}
	return 0;
}

int bci_deploy_plan_format(const struct bci_deploy_plan *plan, char **text, char *err,
			   size_t err_size)
{
	char disk[BCI_DEPLOY_PLAN_PATH_MAX + 8] = "", loader[BCI_DEPLOY_PLAN_PATH_MAX + 10] = "";
	char esp[32] = "", why[200];
	struct bci_deploy_plan back;

	if (plan->disk[0])
		snprintf(disk, sizeof(disk), "disk=%s\n", plan->disk);
	if (plan->esp_partition && plan->esp_partition != 1)
		snprintf(esp, sizeof(esp), "esp_partition=%u\n", plan->esp_partition);
	if (plan->loader[0] && strcmp(plan->loader, BCI_DEPLOY_PLAN_LOADER))
		snprintf(loader, sizeof(loader), "loader=%s\n", plan->loader);
	if (asprintf(text,
		     "# bootci deploy plan, written by the master for the executor's deploy mode\n"
		     "machine=%s\nknown_good=%s\nimage=%s\nimage_size=%llu\nimage_sha256=%s\n"
		     "deploy_id=%s\n%s%s%s",
		     plan->machine, plan->known_good, plan->image,
		     (unsigned long long)plan->image_size, plan->image_sha256, plan->deploy_id, disk,
		     esp, loader) < 0) {
		*text = NULL;
		return -ENOMEM;
	}
	/* What we write must read back: one home for the format's rules. */
	if (bci_deploy_plan_parse("plan", *text, strlen(*text), &back, why, sizeof(why)) < 0) {
		bci_message(err, err_size, "deploy plan cannot be written: %s", why);
		free(*text);
		*text = NULL;
		return -EINVAL;
	}
	return 0;
}
