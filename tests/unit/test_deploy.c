// SPDX-License-Identifier: MIT
/*
 * The deploy plan (lib/deploy_plan.c), the salvage area (lib/salvage.c), and
 * the deploy mode (executor/deploy.c, deploy_salvage.c): its write and
 * verify, and on a fake root a deploy restarted after a power cut.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "deploy_salvage.h"
#include "deploy_plan.h"
#include "executor.h"
#include "fakeroot.h"
#include "fsutil.h"
#include "salvage.h"
#include "sha256.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <dirent.h>
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

/* ---- the salvage area's format ---- */

static void footer_sample(struct bci_salvage_footer *f)
{
	*f = (struct bci_salvage_footer){ .payload_offset = 1 << 20, .payload_size = 5230,
					  .entries = 6, .lost = 2 };
	snprintf(f->deploy_id, sizeof(f->deploy_id), "deploy-20270115T083000Z-1a2b3c4d");
	snprintf(f->machine, sizeof(f->machine), "lab-1");
	snprintf(f->payload_sha256, sizeof(f->payload_sha256), SHA);
	snprintf(f->lost_names, sizeof(f->lost_names), "runs/big runs/bad");
}

static void test_salvage_footer(void **state)
{
	char block[BCI_SALVAGE_FOOTER_SIZE], copy[BCI_SALVAGE_FOOTER_SIZE], err[512];
	struct bci_salvage_footer f, back;

	(void)state;
	footer_sample(&f);
	assert_int_equal(bci_salvage_footer_format(&f, block, err, sizeof(err)), 0);
	assert_memory_equal(block, BCI_SALVAGE_MAGIC "\ndeploy_id deploy-20270115T083000Z-1a2b3c4d\n"
			    "machine lab-1\npayload_offset 1048576\npayload_size 5230\n", 104);
	assert_non_null(strstr(block, "\nentries 6\nlost 2 runs/big runs/bad\nfooter_sha256 "));
	/* The firmware reads the disk's last sector for a backup GPT: the footer leaves it zero. */
	for (size_t i = BCI_SALVAGE_FOOTER_SIZE - 512; i < BCI_SALVAGE_FOOTER_SIZE; i++)
		assert_int_equal(block[i], 0);
	assert_int_equal(bci_salvage_footer_parse(block, sizeof(block), 2 << 20, &back, err,
						  sizeof(err)), 0);
	assert_memory_equal(&f, &back, sizeof(f));

	/* Nothing written there, or cleared: no footer. */
	memset(copy, 0, sizeof(copy));
	assert_int_equal(bci_salvage_footer_parse(copy, sizeof(copy), 2 << 20, &back, err,
						  sizeof(err)), -ENOENT);
	/* One byte changed (a torn write, another program's data): its digest says so. */
	memcpy(copy, block, sizeof(copy));
	*strstr(copy, "payload_size 5230") = 'P';
	assert_int_equal(bci_salvage_footer_parse(copy, sizeof(copy), 2 << 20, &back, err,
						  sizeof(err)), -EBADMSG);
	assert_non_null(strstr(err, "line 5 is not 'payload_size VALUE'"));
	memcpy(copy, block, sizeof(copy));
	strstr(copy, "payload_size 5230")[13] = '6';
	assert_int_equal(bci_salvage_footer_parse(copy, sizeof(copy), 2 << 20, &back, err,
						  sizeof(err)), -EBADMSG);
	assert_non_null(strstr(err, "its digest does not match"));
	memcpy(copy, block, sizeof(copy));
	copy[3000] = 'x';
	assert_int_equal(bci_salvage_footer_parse(copy, sizeof(copy), 2 << 20, &back, err,
						  sizeof(err)), -EBADMSG);
	assert_non_null(strstr(err, "bytes after footer_sha256"));
	memcpy(copy, block, sizeof(copy));
	copy[15] = '2';
	assert_int_equal(bci_salvage_footer_parse(copy, sizeof(copy), 2 << 20, &back, err,
						  sizeof(err)), -EBADMSG);
	assert_non_null(strstr(err, "another version"));
	/* A payload that would run into the footer. */
	assert_int_equal(bci_salvage_footer_parse(block, sizeof(block), (1 << 20) + 5000, &back, err,
						  sizeof(err)), -EBADMSG);
	assert_non_null(strstr(err, "does not end below the footer"));
	/* What cannot be read back is not written. */
	snprintf(f.machine, sizeof(f.machine), "../x");
	assert_int_equal(bci_salvage_footer_format(&f, block, err, sizeof(err)), -EINVAL);
	footer_sample(&f);
	snprintf(f.lost_names, sizeof(f.lost_names), "runs/a\nmachine x");
	assert_int_equal(bci_salvage_footer_format(&f, block, err, sizeof(err)), -EINVAL);
}

static void test_salvage_entries(void **state)
{
	static const struct {
		const char *line, *message;
	} bad[] = {
		{ "file 0644 12 ../x", "'.' or '..' component" },
		{ "file 0644 12 /etc/passwd", "empty, '.' or '..' component" },
		{ "dir 0755 runs//r1", "empty" },
		{ "dir 0755 runs/r1/", "empty" },
		{ "dir 10000 runs", "no mode of at most 07777" },
		{ "dir 0758 runs", "no mode" },
		{ "file 0644 -1 runs/x", "no size" },
		{ "file 0644 012 runs/x", "no size" },
		{ "file 0644 99999999999999999999 runs/x", "no size" },
		{ "file 0644 1 runs/\tx", "control character" },
		{ "link 0777 runs/x", "is not 'dir ...' or 'file ...'" },
		{ "file 0644 runs/x", "no size" },
	};
	struct bci_salvage_entry e = { .mode = 0600, .size = 42 }, back;
	char line[BCI_SALVAGE_LINE_MAX + 1], err[512];
	int n;

	(void)state;
	snprintf(e.path, sizeof(e.path), "bootci-machine.conf");
	n = bci_salvage_entry_format(&e, line, sizeof(line), err, sizeof(err));
	assert_string_equal(line, "file 0600 42 bootci-machine.conf\n");
	assert_int_equal(bci_salvage_entry_parse(line, (size_t)n - 1, &back, err, sizeof(err)), 0);
	assert_memory_equal(&e, &back, sizeof(e));
	e = (struct bci_salvage_entry){ .dir = true, .mode = 0755 };
	snprintf(e.path, sizeof(e.path), "runs/b1-fast/boot-0001");
	n = bci_salvage_entry_format(&e, line, sizeof(line), err, sizeof(err));
	assert_string_equal(line, "dir 0755 runs/b1-fast/boot-0001\n");
	assert_int_equal(bci_salvage_entry_parse(line, (size_t)n - 1, &back, err, sizeof(err)), 0);
	assert_memory_equal(&e, &back, sizeof(e));
	/* A name the format cannot hold is refused by the writer, not written to be misread. */
	snprintf(e.path, sizeof(e.path), "runs/a\nfile 0644 1 x");
	assert_int_equal(bci_salvage_entry_format(&e, line, sizeof(line), err, sizeof(err)), -EINVAL);
	for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); i++) {
		assert_int_equal(bci_salvage_entry_parse(bad[i].line, strlen(bad[i].line), &back, err,
							 sizeof(err)), -EBADMSG);
		if (!strstr(err, bad[i].message))
			fail_msg("case %zu: '%s' does not hold '%s'", i, err, bad[i].message);
	}
}

/* ---- packing an old results partition into the area, and back ---- */

struct tree {
	char dir[64], old[96], disk[96], back[96];
	int disk_fd;
};

static void file_put(const char *dir, const char *rel, const char *text, mode_t mode)
{
	char path[PATH_MAX], parent[PATH_MAX];

	snprintf(path, sizeof(path), "%s/%s", dir, rel);
	snprintf(parent, sizeof(parent), "%s", path);
	*strrchr(parent, '/') = '\0';
	assert_int_equal(bci_mkdir_p(parent, 0755), 0);
	assert_int_equal(bci_write_file_atomic(path, text, strlen(text), mode), 0);
}

static void file_expect(const char *dir, const char *rel, const char *text, mode_t mode)
{
	char path[PATH_MAX], *got = NULL;
	struct stat st;

	snprintf(path, sizeof(path), "%s/%s", dir, rel);
	if (bci_read_file(path, &got, NULL, 1 << 20) < 0)
		fail_msg("%s: not put back", rel);
	assert_string_equal(got, text);
	free(got);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 07777, mode);
}

/* @text holds @line as a whole line. */
static void expect_line(const char *text, const char *line)
{
	size_t n = strlen(line);

	for (const char *p = text; p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
		if (!strncmp(p, line, n) && (p[n] == '\n' || !p[n]))
			return;
	fail_msg("no line '%s' in:\n%s", line, text);
}

static int tree_setup(void **state)
{
	struct tree *t = calloc(1, sizeof(*t));
	char big[4096];

	assert_non_null(t);
	snprintf(t->dir, sizeof(t->dir), "/tmp/bootci-salvage.XXXXXX");
	assert_non_null(mkdtemp(t->dir));
	snprintf(t->old, sizeof(t->old), "%s/old", t->dir);
	snprintf(t->back, sizeof(t->back), "%s/new", t->dir);
	snprintf(t->disk, sizeof(t->disk), "%s/disk", t->dir);
	assert_int_equal(bci_mkdir_p(t->back, 0755), 0);
	file_put(t->old, "bootci-machine.conf", "machine = lab-1\ntoken = secret\n", 0600);
	file_put(t->old, "runs/r1/test/result.txt", "command x\nstate done\nexit-status 0\n", 0644);
	file_put(t->old, "runs/r1/test/out.txt", "", 0644);
	file_put(t->old, "runs/r1/boot-0001/boot.txt", "boot 1\n", 0644);
	memset(big, 'b', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	file_put(t->old, "runs/r2-big/blob", big, 0644);
	/* Not results: the outgoing archives are made again, they are not salvaged. */
	file_put(t->old, "outgoing/r1.tar.zst", "archive", 0600);
	t->disk_fd = open(t->disk, O_RDWR | O_CREAT | O_TRUNC, 0644);
	assert_true(t->disk_fd >= 0);
	assert_int_equal(ftruncate(t->disk_fd, 8 << 20), 0);
	*state = t;
	return 0;
}

static int tree_teardown(void **state)
{
	struct tree *t = *state;
	char cmd[160];

	close(t->disk_fd);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", t->dir);
	assert_int_equal(system(cmd), 0);
	free(t);
	return 0;
}

static void test_salvage_pack_unpack(void **state)
{
	struct tree *t = *state;
	struct bci_salvage_footer f = { .lost = 0 }, back;
	struct bci_salvage_writer w;
	char err[512] = "";
	uint64_t start, end;
	unsigned restored;
	bool identity;
	char byte;

	/* The room: past what the deploy leaves alone, on a MiB, below the footer. */
	assert_int_equal(bci_salvage_room(8 << 20, (8 << 20) - 100, &start, &end), -ENOSPC);
	assert_true(start == end);
	assert_int_equal(bci_salvage_room(8 << 20, 3 * (1 << 20) + 1, &start, &end), 0);
	assert_true(start == 4 << 20 && end == (8 << 20) - BCI_SALVAGE_FOOTER_SIZE);
	/* Room for the identity and run r1, not for r2-big's 4 KiB. */
	bci_salvage_writer_init(&w, t->disk_fd, start, start + 700);
	snprintf(f.deploy_id, sizeof(f.deploy_id), "deploy-1");
	snprintf(f.machine, sizeof(f.machine), "lab-1");
	assert_int_equal(bci_deploy_salvage_pack(&w, t->old, &f, &identity), 2);
	assert_true(identity);
	assert_int_equal(f.lost, 1);
	assert_string_equal(f.lost_names, "runs/r2-big");
	w.end = end;
	assert_int_equal(bci_salvage_writer_finish(&w, &f, err, sizeof(err)), 0);

	assert_int_equal(bci_salvage_footer_read(t->disk_fd, 8 << 20, &back, err, sizeof(err)), 0);
	assert_memory_equal(&f, &back, sizeof(f));
	assert_int_equal(bci_salvage_payload_check(t->disk_fd, &back, err, sizeof(err)), 0);
	assert_int_equal(bci_deploy_salvage_unpack(t->disk_fd, &back, t->back, &restored, &identity,
						   err, sizeof(err)), 0);
	assert_int_equal(restored, 2);
	assert_true(identity);
	file_expect(t->back, "bootci-machine.conf", "machine = lab-1\ntoken = secret\n", 0600);
	file_expect(t->back, "runs/r1/test/result.txt", "command x\nstate done\nexit-status 0\n",
		    0644);
	file_expect(t->back, "runs/r1/test/out.txt", "", 0644);
	file_expect(t->back, "runs/r1/boot-0001/boot.txt", "boot 1\n", 0644);

	/* One byte of the payload changed on the disk: it does not read back. */
	assert_int_equal(pread(t->disk_fd, &byte, 1, (off_t)start + 40), 1);
	byte ^= 0x40;
	assert_int_equal(pwrite(t->disk_fd, &byte, 1, (off_t)start + 40), 1);
	assert_int_equal(bci_salvage_payload_check(t->disk_fd, &back, err, sizeof(err)), -EBADMSG);
	assert_non_null(strstr(err, "read back as sha256"));

	/* Cleared: no footer at all any more. */
	assert_int_equal(bci_salvage_clear(t->disk_fd, 8 << 20), 0);
	assert_int_equal(bci_salvage_footer_read(t->disk_fd, 8 << 20, &back, err, sizeof(err)),
			 -ENOENT);
}

/* A run folder that fails half-way is saved whole or not at all: the writer goes back. */
static void test_salvage_rewind(void **state)
{
	struct tree *t = *state;
	struct bci_salvage_footer f = { .lost = 0 }, back;
	struct bci_salvage_writer w;
	char err[512] = "";
	unsigned restored;
	bool identity;
	int fd = open(t->disk, O_RDONLY);

	assert_true(fd >= 0);
	bci_salvage_writer_init(&w, t->disk_fd, 1 << 20, 2 << 20);
	assert_int_equal(bci_salvage_write_dir(&w, "runs", 0755, err, sizeof(err)), 0);
	bci_salvage_writer_mark(&w);
	assert_int_equal(bci_salvage_write_dir(&w, "runs/half", 0755, err, sizeof(err)), 0);
	/* The file claims more bytes than it has. */
	assert_int_equal(bci_salvage_write_file(&w, "runs/half/x", 0644, fd, 1 << 30, err,
						sizeof(err)), -ENOSPC);
	assert_int_equal(bci_salvage_write_file(&w, "runs/half/x", 0644, fd, (8 << 20) + 1, err,
						sizeof(err)), -ENOSPC);
	bci_salvage_writer_rewind(&w);
	assert_int_equal(w.entries, 1);
	snprintf(f.deploy_id, sizeof(f.deploy_id), "deploy-1");
	snprintf(f.machine, sizeof(f.machine), "lab-1");
	assert_int_equal(bci_salvage_writer_finish(&w, &f, err, sizeof(err)), 0);
	close(fd);
	/* Its room's end is where the footer goes: here not the disk's end. */
	assert_int_equal(bci_salvage_footer_read(t->disk_fd, 8 << 20, &back, err, sizeof(err)),
			 -ENOENT);
	w.end = (8 << 20) - BCI_SALVAGE_FOOTER_SIZE;
	assert_int_equal(bci_salvage_writer_finish(&w, &f, err, sizeof(err)), 0);
	assert_int_equal(bci_salvage_footer_read(t->disk_fd, 8 << 20, &back, err, sizeof(err)), 0);
	assert_int_equal(back.entries, 1);
	assert_int_equal(bci_deploy_salvage_unpack(t->disk_fd, &back, t->back, &restored, &identity,
						   err, sizeof(err)), 0);
	assert_int_equal(restored, 0);
	assert_false(identity);
}

/* ---- a deploy restarted after a power cut, on a fake root ---- */

#define DEPLOY_ID "deploy-20270115T083000Z-1a2b3c4d"
#define IMAGE_SIZE (1 << 20)

/*
 * A machine on a fake root (dry mounts: the old results partition "mounted"
 * is the folder ROOT/run/bootci-old-results as the test fills it): disk vda
 * (12 MiB, a regular file) whose vda1 carries the results label, the plan
 * and a 1 MiB image in the initramfs.
 */
struct machine {
	struct fakeroot root;
	struct bci_executor ex;
	char disk[PATH_MAX], old[PATH_MAX], results[PATH_MAX];
};

static void machine_make(struct machine *m, const char *deploy_id)
{
	char *image = malloc(IMAGE_SIZE), hex[65], plan[1024], path[PATH_MAX + 64];
	int fd;

	assert_non_null(image);
	memset(&m->ex, 0, sizeof(m->ex));
	fakeroot_executor(&m->root, &m->ex, "bootci.mode=deploy bootci.deploy=/etc/bootci/deploy.plan"
			  " bootci.results_wait=1");
	fakeroot_add_disk(&m->root, "vda", NULL, "BOOTCI-RESULTS");
	snprintf(m->disk, sizeof(m->disk), "%s/dev/vda", m->root.dir);
	snprintf(m->old, sizeof(m->old), "%s/run/bootci-old-results", m->root.dir);
	snprintf(m->results, sizeof(m->results), "%s/results", m->root.dir);
	for (size_t i = 0; i < IMAGE_SIZE; i++)
		image[i] = (char)(i * 2654435761U >> 11);
	bci_sha256_bytes(image, IMAGE_SIZE, (unsigned char *)plan);
	bci_sha256_hex((unsigned char *)plan, hex);
	snprintf(path, sizeof(path), "%s/etc/bootci/known-good", m->root.dir);
	assert_int_equal(bci_mkdir_p(path, 0755), 0);
	snprintf(path, sizeof(path), "%s/etc/bootci/known-good/disk.img", m->root.dir);
	assert_int_equal(bci_write_file_atomic(path, image, IMAGE_SIZE, 0644), 0);
	free(image);
	snprintf(plan, sizeof(plan), "machine=lab-1\nknown_good=kg-1\n"
		 "image=/etc/bootci/known-good/disk.img\nimage_size=%d\nimage_sha256=%s\n"
		 "deploy_id=%s\ndisk=/dev/vda\n", IMAGE_SIZE, hex, deploy_id);
	fakeroot_write(&m->root, "/etc/bootci/deploy.plan", plan);
	/* What the old results partition holds. */
	file_put(m->old, "bootci-machine.conf", "machine = lab-1\ntoken = secret\n", 0600);
	file_put(m->old, "runs/never-uploaded/test/result.txt", "command x\nstate done\n", 0644);
	/* The old disk's first bytes, to tell whether the deploy wrote it. */
	fd = open(m->disk, O_WRONLY);
	assert_true(fd >= 0);
	assert_int_equal(pwrite(fd, "old GPT", 7, 512), 7);
	close(fd);
}

static void machine_release(struct machine *m)
{
	fakeroot_executor_release(&m->root, &m->ex);
}

/* The plan as the deploy reads it. */
static void plan_of(struct machine *m, struct bci_deploy_plan *plan)
{
	char path[PATH_MAX + 32], *text = NULL, err[256];
	size_t len;

	snprintf(path, sizeof(path), "%s/etc/bootci/deploy.plan", m->root.dir);
	assert_int_equal(bci_read_file(path, &text, &len, 8192), 0);
	assert_int_equal(bci_deploy_plan_parse("plan", text, len, plan, err, sizeof(err)), 0);
	free(text);
}

/* The first attempt's salvage, durable, as a power cut during its write or read-back leaves it. */
static void first_attempt_cut(struct machine *m)
{
	struct bci_deploy_plan plan;
	struct bci_deploy_salvage s;
	char path[PATH_MAX + 32];
	int image_fd, disk_fd;

	plan_of(m, &plan);
	snprintf(path, sizeof(path), "%s/etc/bootci/known-good/disk.img", m->root.dir);
	image_fd = open(path, O_RDONLY);
	assert_true(image_fd >= 0);
	assert_int_equal(bci_deploy_salvage_save(&m->ex, &plan, m->disk, image_fd, &s), 0);
	assert_true(s.held && !s.kept);
	assert_int_equal(s.footer.entries, 5);
	close(image_fd);
	/* Then the cut: the old partition is overwritten, half of the image written. */
	snprintf(path, sizeof(path), "rm -rf '%s'/*", m->old);
	assert_int_equal(system(path), 0);
	disk_fd = open(m->disk, O_WRONLY);
	assert_true(disk_fd >= 0);
	assert_int_equal(pwrite(disk_fd, "half an image", 13, 0), 13);
	close(disk_fd);
}

static bool footer_present(struct machine *m)
{
	struct bci_salvage_footer f;
	char err[256];
	int fd = open(m->disk, O_RDONLY), ret;

	assert_true(fd >= 0);
	ret = bci_salvage_footer_read(fd, 12 << 20, &f, err, sizeof(err));
	close(fd);
	assert_true(ret == 0 || ret == -ENOENT);
	return ret == 0;
}

/* The file of @dir (a folder of the results) whose name starts with @prefix: its text. */
static char *record_read(const char *dir)
{
	struct dirent *entry;
	char path[PATH_MAX + 300], *text = NULL;
	DIR *d = opendir(dir);

	assert_non_null(d);
	while ((entry = readdir(d)))
		if (entry->d_name[0] != '.')
			break;
	assert_non_null(entry);
	snprintf(path, sizeof(path), "%s/%s", dir, entry->d_name);
	closedir(d);
	assert_int_equal(bci_read_file(path, &text, NULL, 1 << 16), 0);
	return text;
}

/*
 * A power cut during the write or the read-back: the next attempt (the
 * master hands out the same deploy) finds the salvage of its own deploy in
 * the area, salvages nothing from the half-written disk, and puts the
 * identity and the run back; then the area is cleared and the deploy's
 * record is a finished run named after the deploy.
 */
static void test_deploy_restarted_after_cut(void **state)
{
	struct machine m;
	char path[PATH_MAX + 64], *text;

	(void)state;
	machine_make(&m, DEPLOY_ID);
	first_attempt_cut(&m);
	assert_int_equal(bci_deploy_run(&m.ex), 0);
	file_expect(m.results, "bootci-machine.conf", "machine = lab-1\ntoken = secret\n", 0600);
	file_expect(m.results, "runs/never-uploaded/test/result.txt", "command x\nstate done\n",
		    0644);
	assert_false(footer_present(&m));
	snprintf(path, sizeof(path), "%s/deploy", m.results);
	text = record_read(path);
	expect_line(text, "deploy_id=" DEPLOY_ID);
	expect_line(text, "salvage=kept from an earlier attempt");
	expect_line(text, "salvaged=2");
	expect_line(text, "identity=yes");
	free(text);
	/* The record the master waits for: a finished program run, this boot's record in it. */
	snprintf(path, sizeof(path), "%s/runs/" DEPLOY_ID "/test/result.txt", m.results);
	assert_int_equal(bci_read_file(path, &text, NULL, 4096), 0);
	assert_non_null(strstr(text, "command deploy kg-1 sha256:"));
	expect_line(text, "state done");
	expect_line(text, "exit-status 0");
	free(text);
	snprintf(path, sizeof(path), "%s/runs/" DEPLOY_ID "/test/out.txt", m.results);
	assert_int_equal(bci_read_file(path, &text, NULL, 4096), 0);
	expect_line(text, "deploy_id=" DEPLOY_ID);
	free(text);
	snprintf(path, sizeof(path), "%s/runs/" DEPLOY_ID "/boot-0001/boot.txt", m.results);
	assert_int_equal(access(path, F_OK), 0);
	machine_release(&m);
}

/* An area another deploy left (one that finished) is not this deploy's: the old disk is salvaged. */
static void test_deploy_replaces_another_deploys_area(void **state)
{
	struct machine m;
	char path[PATH_MAX + 64], *text;

	(void)state;
	/* An earlier deploy's area, left there (its clearing failed, say)... */
	machine_make(&m, "deploy-older");
	first_attempt_cut(&m);
	/* ...then a later deploy of the same machine, whose old partition holds newer results. */
	file_put(m.old, "bootci-machine.conf", "machine = lab-1\ntoken = newer\n", 0600);
	file_put(m.old, "runs/newer/test/result.txt", "command y\nstate done\n", 0644);
	{
		struct bci_deploy_plan plan;
		char *formatted, err[256];

		plan_of(&m, &plan);
		snprintf(plan.deploy_id, sizeof(plan.deploy_id), DEPLOY_ID);
		assert_int_equal(bci_deploy_plan_format(&plan, &formatted, err, sizeof(err)), 0);
		fakeroot_write(&m.root, "/etc/bootci/deploy.plan", formatted);
		free(formatted);
	}
	assert_int_equal(bci_deploy_run(&m.ex), 0);
	file_expect(m.results, "bootci-machine.conf", "machine = lab-1\ntoken = newer\n", 0600);
	file_expect(m.results, "runs/newer/test/result.txt", "command y\nstate done\n", 0644);
	snprintf(path, sizeof(path), "%s/runs/never-uploaded", m.results);
	assert_int_equal(access(path, F_OK), -1);
	snprintf(path, sizeof(path), "%s/deploy", m.results);
	text = record_read(path);
	expect_line(text, "salvage=written");
	free(text);
	machine_release(&m);
}

/* This deploy's salvage does not read back: the disk is not written, the salvage stays. */
static void test_deploy_keeps_a_damaged_salvage(void **state)
{
	struct bci_salvage_footer f;
	struct machine m;
	char err[256], head[8] = "";
	int fd;

	(void)state;
	machine_make(&m, DEPLOY_ID);
	first_attempt_cut(&m);
	fd = open(m.disk, O_RDWR);
	assert_true(fd >= 0);
	assert_int_equal(bci_salvage_footer_read(fd, 12 << 20, &f, err, sizeof(err)), 0);
	assert_int_equal(pwrite(fd, "X", 1, (off_t)f.payload_offset + 3), 1);
	assert_int_equal(bci_deploy_run(&m.ex), -EBADMSG);
	assert_int_equal(pread(fd, head, 4, 0), 4);
	assert_memory_equal(head, "half", 4);
	assert_true(footer_present(&m));
	close(fd);
	machine_release(&m);
}

/* A disk with no room past the image for the area is not written over results it holds. */
static void test_deploy_without_room(void **state)
{
	struct machine m;
	char head[8] = "";
	int fd;

	(void)state;
	machine_make(&m, DEPLOY_ID);
	assert_int_equal(truncate(m.disk, IMAGE_SIZE + 4096), 0);
	assert_int_equal(bci_deploy_run(&m.ex), -ENOSPC);
	fd = open(m.disk, O_RDONLY);
	assert_true(fd >= 0);
	assert_int_equal(pread(fd, head, 7, 512), 7);
	assert_memory_equal(head, "old GPT", 7);
	close(fd);
	machine_release(&m);
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
		cmocka_unit_test(test_salvage_footer),
		cmocka_unit_test(test_salvage_entries),
		cmocka_unit_test_setup_teardown(test_salvage_pack_unpack, tree_setup, tree_teardown),
		cmocka_unit_test_setup_teardown(test_salvage_rewind, tree_setup, tree_teardown),
		cmocka_unit_test(test_deploy_restarted_after_cut),
		cmocka_unit_test(test_deploy_replaces_another_deploys_area),
		cmocka_unit_test(test_deploy_keeps_a_damaged_salvage),
		cmocka_unit_test(test_deploy_without_room),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
