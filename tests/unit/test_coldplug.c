// SPDX-License-Identifier: MIT
/*
 * executor/coldplug.c: modules chosen by the modalias of the devices of a fake
 * /sys, looked up in the test kernel's real module indexes, in path order,
 * each once, without the denied and blacklisted ones; loaded pass after pass
 * while loading makes new devices appear.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "executor.h"
#include "fakeroot.h"
#include "fakesys.h"
#include "machine.h"

#include <libkmod.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char loads[4096];
static struct fakeroot *loading_root;

/* Records each load; loading virtio_pci makes its virtio device appear, as the kernel does. */
static int rec_probe_module(struct kmod_module *module, const char *options)
{
	const char *name = kmod_module_get_name(module);
	size_t used = strlen(loads);

	(void)options;
	snprintf(loads + used, sizeof(loads) - used, "%s ", name);
	if (strcmp(name, "virtio_pci") == 0)
		fakesys_add_modalias(loading_root, "pci0000:00/0000:00:06.0/virtio6",
				     "virtio:d00000004v00001AF4");
	return 0;
}

static int rec_mount(const char *source, const char *target, const char *fstype,
		     unsigned long flags, const char *data)
{
	(void)source, (void)target, (void)fstype, (void)flags, (void)data;
	return 0;
}

static int rec_umount(const char *target)
{
	(void)target;
	return 0;
}

static int rec_reboot(int how)
{
	(void)how;
	return 0;
}

static void rec_sync(void)
{
}

static const struct bci_sys recording_sys = {
	.name = "test",
	.mount = rec_mount,
	.umount = rec_umount,
	.probe_module = rec_probe_module,
	.reboot = rec_reboot,
	.sync = rec_sync,
};

struct fixture {
	struct fakeroot root;
	struct bci_executor ex;
};

/*
 * A machine: QEMU's VGA (bochs), a virtio disk and a virtio NIC behind
 * virtio_pci, a device no module drives, and a link to a device elsewhere in
 * /sys (virtio_rng's alias) that the walk must not follow.
 */
static int start(struct fixture *f, const char *cmdline)
{
	struct fakesys_pci vga = { "0000:00:02.0", 0x1234, 0x1111, 0x1af4, 0x1100, 0x030000, 2,
				   NULL };
	struct fakesys_pci disk = { "0000:00:03.0", 0x1af4, 0x1001, 0x1af4, 0x0002, 0x010000, 0,
				    NULL };
	struct fakesys_pci nic = { "0000:00:04.0", 0x1af4, 0x1000, 0x1af4, 0x0001, 0x020000, 0,
				   NULL };
	struct fakesys_pci unknown = { "0000:00:05.0", 0xffff, 0xfff0, 0, 0, 0xff0000, 0, NULL };

	memset(f, 0, sizeof(*f));
	loads[0] = '\0';
	loading_root = &f->root;
	fakeroot_executor(&f->root, &f->ex, cmdline);
	f->ex.sys = &recording_sys;
	if (fakeroot_add_kernel_modules(&f->root) < 0)
		return -1;
	assert_int_equal(bci_modules_init(&f->ex), 0);
	fakesys_add_pci(&f->root, &nic);
	fakesys_add_pci(&f->root, &disk);
	fakesys_add_pci(&f->root, &vga);
	fakesys_add_pci(&f->root, &unknown);
	fakesys_add_modalias(&f->root, "pci0000:00/0000:00:03.0/virtio1", "virtio:d00000002v00001AF4");
	fakesys_add_modalias(&f->root, "pci0000:00/0000:00:04.0/virtio2", "virtio:d00000001v00001AF4");
	fakeroot_write(&f->root, "/sys/bus/virtio/devices/virtio9/modalias",
		       "virtio:d00000004v00001AF4\n");
	char target[PATH_MAX + 64];
	snprintf(target, sizeof(target), "%.*s/sys/devices/pci0000:00/rng", PATH_MAX - 64,
		 f->root.dir);
	assert_int_equal(symlink("../../bus/virtio/devices/virtio9", target), 0);
	return 0;
}

static int setup(void **state)
{
	*state = calloc(1, sizeof(struct fixture));
	return *state ? 0 : -1;
}

static void teardown_fixture(struct fixture *f)
{
	bci_modules_exit(&f->ex);
	fakeroot_executor_release(&f->root, &f->ex);
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	teardown_fixture(f);
	free(f);
	return 0;
}

/* The plan's modules joined by spaces. */
static const char *plan_text(const struct bci_coldplug_plan *plan)
{
	static char text[1024];

	text[0] = '\0';
	for (size_t i = 0; i < plan->count; i++) {
		strcat(text, plan->modules[i]);
		strcat(text, " ");
	}
	return text;
}

static void plan_follows_device_paths(void **state)
{
	struct fixture *f = *state;
	struct bci_coldplug_plan plan;

	if (start(f, "quiet") < 0)
		skip();
	assert_int_equal(bci_coldplug_plan(&f->ex, NULL, &plan), 0);
	/* 00:02.0 first; a bus's own alias before its children's; virtio_pci once for
	 * two functions; nothing for 00:05.0 nor through the link to virtio9. */
	assert_string_equal(plan_text(&plan), "bochs virtio_pci virtio_blk virtio_net ");
	assert_int_equal(plan.denied, 0);
	bci_coldplug_plan_free(&plan);
}

static void deny_list_and_blacklist_refuse_modules(void **state)
{
	struct fixture *f = *state;
	struct bci_coldplug_plan plan;

	/* Names compare as libkmod's: virtio-net is virtio_net. */
	if (start(f, "bootci.coldplug_deny=bochs,virtio-net") < 0)
		skip();
	assert_int_equal(bci_coldplug_plan(&f->ex, NULL, &plan), 0);
	assert_string_equal(plan_text(&plan), "virtio_pci virtio_blk ");
	assert_int_equal(plan.denied, 2);
	bci_coldplug_plan_free(&plan);

	/* modprobe.d's blacklist, under the root, applies as it does to udev's loads. */
	bci_modules_exit(&f->ex);
	fakeroot_write(&f->root, "/etc/modprobe.d/local.conf", "blacklist virtio_blk\n");
	assert_int_equal(bci_modules_init(&f->ex), 0);
	assert_int_equal(bci_coldplug_plan(&f->ex, NULL, &plan), 0);
	assert_string_equal(plan_text(&plan), "virtio_pci ");
	assert_int_equal(plan.denied, 3);
	bci_coldplug_plan_free(&plan);
}

/* efi_pstore matches the efivars platform device: only pstore_backends says whether it loads. */
static void pstore_backends_not_named_are_refused(void **state)
{
	struct fixture *f = *state;
	struct bci_coldplug_plan plan;

	if (start(f, "quiet") < 0)
		skip();
	fakesys_add_modalias(&f->root, "platform/efivars.0", "platform:efivars");
	assert_int_equal(bci_coldplug_plan(&f->ex, NULL, &plan), 0);
	assert_string_equal(plan_text(&plan), "bochs virtio_pci virtio_blk virtio_net efi_pstore ");
	assert_int_equal(plan.denied, 0);
	bci_coldplug_plan_free(&plan);

	/* No back end (a machine without pstore), or another one: efi_pstore is refused. */
	const char *others[] = { "bootci.pstore_backends=", "bootci.pstore_backends=ramoops" };
	for (size_t i = 0; i < 2; i++) {
		teardown_fixture(f);
		if (start(f, others[i]) < 0)
			skip();
		fakesys_add_modalias(&f->root, "platform/efivars.0", "platform:efivars");
		assert_int_equal(bci_coldplug_plan(&f->ex, NULL, &plan), 0);
		assert_string_equal(plan_text(&plan), "bochs virtio_pci virtio_blk virtio_net ");
		assert_int_equal(plan.denied, 1);
		bci_coldplug_plan_free(&plan);
	}
}

static void modules_already_in_the_kernel_are_skipped(void **state)
{
	struct fixture *f = *state;
	struct bci_coldplug_plan plan, skip = { 0 };

	if (start(f, "quiet") < 0)
		skip();
	fakeroot_write(&f->root, "/sys/module/virtio_pci/initstate", "live\n");
	assert_int_equal(bci_coldplug_plan(&f->ex, NULL, &plan), 0);
	assert_string_equal(plan_text(&plan), "bochs virtio_blk virtio_net ");
	bci_coldplug_plan_free(&plan);

	char *names[] = { "bochs", "virtio_blk" };
	skip.modules = names;
	skip.count = 2;
	assert_int_equal(bci_coldplug_plan(&f->ex, &skip, &plan), 0);
	assert_string_equal(plan_text(&plan), "virtio_net ");
	bci_coldplug_plan_free(&plan);
}

static void run_loads_until_no_new_device(void **state)
{
	struct fixture *f = *state;

	if (start(f, "bootci.coldplug_deny=bochs") < 0)
		skip();
	/* Loading virtio_pci makes virtio6 appear (virtio_rng): the second pass loads it. */
	assert_int_equal(bci_coldplug_run(&f->ex), 4);
	assert_string_equal(loads, "virtio_pci virtio_blk virtio_net virtio_rng ");
}

static void run_does_nothing_when_turned_off(void **state)
{
	struct fixture *f = *state;

	if (start(f, "bootci.coldplug=no") < 0)
		skip();
	assert_int_equal(bci_coldplug_run(&f->ex), 0);
	assert_string_equal(loads, "");
}

static void firmware_loader_messages_turned_on_before_any_load(void **state)
{
	struct fixture *f = *state;

	if (start(f, "quiet") < 0)
		skip();
	/* The kernel's control file exists when it has dynamic debug; libkmod is set up again. */
	bci_modules_exit(&f->ex);
	fakeroot_write(&f->root, "/proc/dynamic_debug/control", "");
	assert_int_equal(bci_modules_init(&f->ex), 0);
	assert_string_equal(fakeroot_read(&f->root, "/proc/dynamic_debug/control"),
			    "module firmware_class +p\n");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(plan_follows_device_paths, setup, teardown),
		cmocka_unit_test_setup_teardown(deny_list_and_blacklist_refuse_modules, setup, teardown),
		cmocka_unit_test_setup_teardown(pstore_backends_not_named_are_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(modules_already_in_the_kernel_are_skipped, setup,
						teardown),
		cmocka_unit_test_setup_teardown(run_loads_until_no_new_device, setup, teardown),
		cmocka_unit_test_setup_teardown(run_does_nothing_when_turned_off, setup, teardown),
		cmocka_unit_test_setup_teardown(firmware_loader_messages_turned_on_before_any_load, setup,
						teardown),
	};

	return cmocka_run_group_tests_name("coldplug", tests, NULL, NULL);
}
