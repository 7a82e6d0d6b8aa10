// SPDX-License-Identifier: MIT
/* The deploy plan (lib/deploy_plan.c) and the deploy mode's write and verify (executor/deploy.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "deploy_plan.h"
#include "executor.h"
#include "sha256.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define SHA "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
#define GOOD "# a plan\n" \
	     "machine = lab-1\n" \
	     "known_good=kg-7\n" \
	     "image=/etc/bootci/known-good/disk.img\n" \
	     "image_size=337641472\n" \
	     "image_sha256=" SHA "\n" \
	     "deploy_id=deploy-20270115T083000Z-1a2b3c4d\n"

static int parse(const char *text, struct bci_deploy_plan *plan, char *err, size_t size)
{
	err[0] = '\0';
	return bci_deploy_plan_parse("deploy.plan", text, strlen(text), plan, err, size);
}

static void test_plan_good(void **state)
{
	struct bci_deploy_plan plan, again;
	char err[512], *text;

	(void)state;
	assert_int_equal(parse(GOOD, &plan, err, sizeof(err)), 0);
	assert_string_equal(plan.machine, "lab-1");
	assert_string_equal(plan.known_good, "kg-7");
	assert_string_equal(plan.image, "/etc/bootci/known-good/disk.img");
	assert_true(plan.image_size == 337641472ULL);
	assert_string_equal(plan.image_sha256, SHA);
	assert_string_equal(plan.deploy_id, "deploy-20270115T083000Z-1a2b3c4d");
	/* The defaults of what the master may leave out. */
	assert_string_equal(plan.disk, "");
	assert_int_equal(plan.esp_partition, 1);
	assert_string_equal(plan.loader, BCI_DEPLOY_PLAN_LOADER);

	assert_int_equal(parse(GOOD "disk=/dev/nvme0n1\nesp_partition=2\nloader=/EFI/x.efi\n", &plan,
			       err, sizeof(err)), 0);
	assert_string_equal(plan.disk, "/dev/nvme0n1");
	assert_int_equal(plan.esp_partition, 2);
	assert_string_equal(plan.loader, "/EFI/x.efi");

	/* The writer's text reads back as the same plan. */
	assert_int_equal(bci_deploy_plan_format(&plan, &text, err, sizeof(err)), 0);
	assert_int_equal(parse(text, &again, err, sizeof(err)), 0);
	assert_memory_equal(&plan, &again, sizeof(plan));
	assert_non_null(strstr(text, "\ndisk=/dev/nvme0n1\n"));
	free(text);
}

/* Each bad plan is refused with the line, the key and what is wrong. */
static void test_plan_bad(void **state)
{
	static const struct {
		const char *text, *message;
	} cases[] = {
		{ GOOD "colour=blue\n", "deploy.plan:8: unknown key 'colour'" },
		{ GOOD "machine=again\n", "deploy.plan:8: machine: given twice" },
		{ GOOD "disk=/dev/../sda\n", "deploy.plan:8: disk: '/dev/../sda' is not a name" },
		{ GOOD "disk=/home/disk.img\n", "deploy.plan:8: disk: '/home/disk.img' is not /dev/NAME" },
		{ GOOD "esp_partition=0\n", "deploy.plan:8: esp_partition: '0' is not a partition number" },
		{ GOOD "esp_partition=1x\n", "deploy.plan:8: esp_partition: '1x' is not a partition" },
		{ GOOD "loader=EFI/x.efi\n", "deploy.plan:8: loader: 'EFI/x.efi' is not an absolute path" },
		{ "deploy_id=../x\n", "deploy.plan:1: deploy_id: '../x' is not a name" },
		{ "machine=lab-1\nknown_good=k\nimage=/i\nimage_size=1\nimage_sha256=" SHA "\n",
		  "deploy.plan: deploy_id missing" },
		{ "machine=../x\n", "deploy.plan:1: machine: '../x' is not a name" },
		{ "image=/etc/../disk.img\n", "deploy.plan:1: image: '/etc/../disk.img' has a '..' component" },
		{ "image_size=0\n", "deploy.plan:1: image_size: '0' is not a size in bytes" },
		{ "image_size=-5\n", "deploy.plan:1: image_size: '-5' is not a size in bytes" },
		{ "image_size=99999999999999999999\n", "deploy.plan:1: image_size: '99999999999999999999' is not a size" },
		{ "image_sha256=" SHA "0\n", "deploy.plan:1: image_sha256: '" SHA "0' is not 64 lowercase" },
		{ "image_sha256=0123456789ABCDEF0123456789abcdef0123456789abcdef0123456789abcdef\n",
		  "is not 64 lowercase hex digits" },
		{ "machine=lab-1\nknown_good=k\nimage=/i\nimage_size=1\n", "deploy.plan: image_sha256 missing" },
		{ "", "deploy.plan: machine missing" },
		{ "just words\n", "deploy.plan:1:" },
	};
	struct bci_deploy_plan plan;
	char err[512];

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
		assert_int_equal(parse(cases[i].text, &plan, err, sizeof(err)), -EINVAL);
		if (!strstr(err, cases[i].message))
			fail_msg("case %zu: '%s' does not hold '%s'", i, err, cases[i].message);
	}
	/* A plan file is a dozen lines: anything huge is not one. */
	{
		size_t big = BCI_DEPLOY_PLAN_TEXT_MAX + 1;
		char *text = malloc(big);

		assert_non_null(text);
		memset(text, '#', big);
		assert_int_equal(bci_deploy_plan_parse("deploy.plan", text, big, &plan, err,
						       sizeof(err)), -EINVAL);
		assert_non_null(strstr(err, "more than a plan's"));
		free(text);
	}
}

/* ---- write and verify, on files standing for the image and the disk ---- */

struct files {
	char dir[64], image[96], disk[96];
	int image_fd, disk_fd;
	size_t size;
	char sha[65];
};

static int files_setup(void **state)
{
	struct files *f = calloc(1, sizeof(*f));
	struct bci_sha256 ctx;
	unsigned char *bytes;

	assert_non_null(f);
	snprintf(f->dir, sizeof(f->dir), "/tmp/bootci-deploy.XXXXXX");
	assert_non_null(mkdtemp(f->dir));
	snprintf(f->image, sizeof(f->image), "%s/disk.img", f->dir);
	snprintf(f->disk, sizeof(f->disk), "%s/vda", f->dir);
	/* More than one 4 MiB chunk and not a multiple of it: the loop's edges. */
	f->size = (9UL << 20) + 4099;
	bytes = malloc(f->size);
	assert_non_null(bytes);
	for (size_t i = 0; i < f->size; i++)
		bytes[i] = (unsigned char)(i * 2654435761U >> 13);
	f->image_fd = open(f->image, O_RDWR | O_CREAT | O_TRUNC, 0644);
	assert_true(f->image_fd >= 0);
	assert_int_equal(write(f->image_fd, bytes, f->size), (ssize_t)f->size);
	bci_sha256_init(&ctx);
	bci_sha256_update(&ctx, bytes, f->size);
	bci_sha256_final_hex(&ctx, f->sha);
	free(bytes);
	/* The disk is bigger than the image and holds old bytes: only the image's part counts. */
	f->disk_fd = open(f->disk, O_RDWR | O_CREAT | O_TRUNC, 0644);
	assert_true(f->disk_fd >= 0);
	assert_int_equal(ftruncate(f->disk_fd, (off_t)f->size + (1 << 20)), 0);
	assert_int_equal(pwrite(f->disk_fd, "old GPT", 7, 512), 7);
	*state = f;
	return 0;
}

static int files_teardown(void **state)
{
	struct files *f = *state;

	close(f->image_fd);
	close(f->disk_fd);
	unlink(f->image);
	unlink(f->disk);
	rmdir(f->dir);
	free(f);
	return 0;
}

static void test_write_verify(void **state)
{
	struct files *f = *state;
	char err[512] = "", hex[65];

	assert_int_equal(bci_deploy_write(f->image_fd, f->disk_fd, f->size, err, sizeof(err)), 0);
	assert_int_equal(bci_deploy_verify(f->disk_fd, f->size, f->sha, err, sizeof(err)), 0);
	assert_int_equal(bci_deploy_digest(f->image_fd, f->size, hex, err, sizeof(err)), 0);
	assert_string_equal(hex, f->sha);
}

/* A disk that does not keep one byte fails the verify, naming both digests. */
static void test_verify_detects_one_byte(void **state)
{
	struct files *f = *state;
	char err[512] = "", c;

	assert_int_equal(bci_deploy_write(f->image_fd, f->disk_fd, f->size, err, sizeof(err)), 0);
	assert_int_equal(pread(f->disk_fd, &c, 1, (off_t)f->size - 1), 1);
	c ^= 0x20;
	assert_int_equal(pwrite(f->disk_fd, &c, 1, (off_t)f->size - 1), 1);
	assert_int_equal(bci_deploy_verify(f->disk_fd, f->size, f->sha, err, sizeof(err)), -EBADMSG);
	assert_non_null(strstr(err, "the disk reads back as sha256 "));
	assert_non_null(strstr(err, f->sha));
}

/* An image shorter than the plan says is an error, not a partial disk called good. */
static void test_short_image(void **state)
{
	struct files *f = *state;
	char err[512] = "";

	assert_int_equal(ftruncate(f->image_fd, (off_t)f->size - 10), 0);
	assert_int_equal(bci_deploy_write(f->image_fd, f->disk_fd, f->size, err, sizeof(err)), -EIO);
	assert_non_null(strstr(err, "reading the image at byte"));
	assert_non_null(strstr(err, "it ends early"));
	/* A disk smaller than the image cannot verify either. */
	assert_int_equal(ftruncate(f->disk_fd, 4096), 0);
	assert_int_equal(bci_deploy_verify(f->disk_fd, f->size, f->sha, err, sizeof(err)), -EIO);
	assert_non_null(strstr(err, "reading the disk back: reading at byte 4096: it ends early"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_plan_good),
		cmocka_unit_test(test_plan_bad),
		cmocka_unit_test_setup_teardown(test_write_verify, files_setup, files_teardown),
		cmocka_unit_test_setup_teardown(test_verify_detects_one_byte, files_setup,
						files_teardown),
		cmocka_unit_test_setup_teardown(test_short_image, files_setup, files_teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
