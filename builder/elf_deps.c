// SPDX-License-Identifier: MIT
#include "elf_deps.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/* Debian's x86-64 loader (ld.so --help): its multiarch dirs first, then the generic ones. */
static const char *const elf_standard_dirs[] = {
	"/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu", "/lib", "/usr/lib",
};
#define ELF_FALLBACK_DIR "/usr/lib/x86_64-linux-gnu"

void builder_elf_info_clear(struct builder_elf_info *info)
{
	for (size_t i = 0; i < info->needed_count; i++)
		free(info->needed[i]);
	free(info->needed);
	free(info->interp);
	free(info->rpath);
	free(info->runpath);
	memset(info, 0, sizeof(*info));
}

/* [offset, offset + size) lies inside a buffer of @len bytes. */
static int elf_in_bounds(uint64_t offset, uint64_t size, size_t len)
{
	return offset <= len && size <= len - offset;
}

/* A copy of the NUL-terminated string at @offset, which must end before @limit. */
static char *elf_string(const uint8_t *buf, uint64_t offset, uint64_t limit)
{
	const void *nul;

	if (offset >= limit)
		return NULL;
	nul = memchr(buf + offset, '\0', limit - offset);
	return nul ? strdup((const char *)buf + offset) : NULL;
}

struct elf_dynamic {
	uint64_t strtab, strsz;
	uint64_t *needed;
	size_t needed_count;
	uint64_t rpath, runpath;
	int has_strtab, has_strsz, has_rpath, has_runpath;
};

/* The file offset of the virtual address @vaddr, through the PT_LOAD segments. */
static int elf_vaddr_to_offset(const Elf64_Phdr *ph, size_t phnum, uint64_t vaddr, uint64_t *offset)
{
	for (size_t i = 0; i < phnum; i++) {
		if (ph[i].p_type != PT_LOAD)
			continue;
		if (vaddr >= ph[i].p_vaddr && vaddr - ph[i].p_vaddr < ph[i].p_filesz) {
			*offset = ph[i].p_offset + (vaddr - ph[i].p_vaddr);
			return 0;
		}
	}
	return -EINVAL;
}

#define ELF_BAD(...) do { bci_message(err, err_size, __VA_ARGS__); ret = -EINVAL; goto out; } while (0)

int builder_elf_parse(const uint8_t *buf, size_t len, const char *name,
		      struct builder_elf_info *info, char *err, size_t err_size)
{
	struct elf_dynamic dyn = { 0 };
	Elf64_Phdr *ph = NULL;
	Elf64_Ehdr eh;
	int ret = 0;

	memset(info, 0, sizeof(*info));
	if (len < EI_NIDENT || memcmp(buf, ELFMAG, SELFMAG)) {
		bci_message(err, err_size, "%s: not an ELF file", name);
		return -ENOEXEC;
	}
	if (buf[EI_CLASS] != ELFCLASS64 || buf[EI_DATA] != ELFDATA2LSB) {
		bci_message(err, err_size, "%s: only ELF64 little-endian files are supported", name);
		return -ENOTSUP;
	}
	if (len < sizeof(eh)) {
		bci_message(err, err_size, "%s: truncated ELF header", name);
		return -EINVAL;
	}
	memcpy(&eh, buf, sizeof(eh));
	info->machine = eh.e_machine;
	if (eh.e_phnum && (eh.e_phentsize < sizeof(Elf64_Phdr) ||
			   !elf_in_bounds(eh.e_phoff, (uint64_t)eh.e_phentsize * eh.e_phnum, len)))
		ELF_BAD("%s: program headers outside the file", name);
	ph = calloc(eh.e_phnum ? eh.e_phnum : 1, sizeof(*ph));
	if (!ph) {
		ret = -ENOMEM;
		goto out;
	}
	/* Copied out: the file gives no alignment guarantee for in-place access. */
	for (size_t i = 0; i < eh.e_phnum; i++)
		memcpy(&ph[i], buf + eh.e_phoff + i * eh.e_phentsize, sizeof(*ph));

	for (size_t i = 0; i < eh.e_phnum; i++) {
		if (ph[i].p_type == PT_INTERP) {
			if (info->interp || !elf_in_bounds(ph[i].p_offset, ph[i].p_filesz, len))
				ELF_BAD("%s: bad PT_INTERP", name);
			info->interp = elf_string(buf, ph[i].p_offset, ph[i].p_offset + ph[i].p_filesz);
			if (!info->interp || info->interp[0] != '/')
				ELF_BAD("%s: bad PT_INTERP", name);
		} else if (ph[i].p_type == PT_DYNAMIC) {
			if (info->dynamic || !elf_in_bounds(ph[i].p_offset, ph[i].p_filesz, len))
				ELF_BAD("%s: bad PT_DYNAMIC", name);
			info->dynamic = true;
			for (uint64_t at = 0; at + sizeof(Elf64_Dyn) <= ph[i].p_filesz; at += sizeof(Elf64_Dyn)) {
				Elf64_Dyn d;

				memcpy(&d, buf + ph[i].p_offset + at, sizeof(d));
				if (d.d_tag == DT_NULL)
					break;
				switch (d.d_tag) {
				case DT_STRTAB: dyn.strtab = d.d_un.d_ptr; dyn.has_strtab = 1; break;
				case DT_STRSZ: dyn.strsz = d.d_un.d_val; dyn.has_strsz = 1; break;
				case DT_RPATH: dyn.rpath = d.d_un.d_val; dyn.has_rpath = 1; break;
				case DT_RUNPATH: dyn.runpath = d.d_un.d_val; dyn.has_runpath = 1; break;
				case DT_NEEDED: {
					uint64_t *bigger;

					if (dyn.needed_count >= 4096)
						ELF_BAD("%s: too many DT_NEEDED entries", name);
					bigger = realloc(dyn.needed, (dyn.needed_count + 1) * sizeof(*bigger));
					if (!bigger) {
						ret = -ENOMEM;
						goto out;
					}
					dyn.needed = bigger;
					dyn.needed[dyn.needed_count++] = d.d_un.d_val;
					break;
				}
				}
			}
		}
	}
	if (!info->dynamic)
		goto out;
	if (!dyn.needed_count && !dyn.has_rpath && !dyn.has_runpath)
		goto out;
	{
		uint64_t strtab_offset, limit;

		if (!dyn.has_strtab || !dyn.has_strsz ||
		    elf_vaddr_to_offset(ph, eh.e_phnum, dyn.strtab, &strtab_offset) < 0 ||
		    !elf_in_bounds(strtab_offset, dyn.strsz, len))
			ELF_BAD("%s: dynamic string table outside the file", name);
		limit = strtab_offset + dyn.strsz;
		info->needed = calloc(dyn.needed_count ? dyn.needed_count : 1, sizeof(*info->needed));
		if (!info->needed) {
			ret = -ENOMEM;
			goto out;
		}
		for (size_t i = 0; i < dyn.needed_count; i++) {
			if (dyn.needed[i] >= dyn.strsz ||
			    !(info->needed[i] = elf_string(buf, strtab_offset + dyn.needed[i], limit)) ||
			    !info->needed[i][0]) {
				info->needed_count = i + (info->needed[i] != NULL);
				ELF_BAD("%s: bad DT_NEEDED string", name);
			}
			info->needed_count = i + 1;
		}
		if (dyn.has_rpath && (dyn.rpath >= dyn.strsz ||
				      !(info->rpath = elf_string(buf, strtab_offset + dyn.rpath, limit))))
			ELF_BAD("%s: bad DT_RPATH string", name);
		if (dyn.has_runpath && (dyn.runpath >= dyn.strsz ||
					!(info->runpath = elf_string(buf, strtab_offset + dyn.runpath, limit))))
			ELF_BAD("%s: bad DT_RUNPATH string", name);
	}
out:
	free(dyn.needed);
	free(ph);
	if (ret < 0)
		builder_elf_info_clear(info);
	return ret;
}

int builder_elf_read(const char *path, struct builder_elf_info *info, char *err, size_t err_size)
{
	struct stat st;
	void *map;
	int fd, ret;

	memset(info, 0, sizeof(*info));
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		ret = -errno;
		bci_message(err, err_size, "%s: %s", path, strerror(-ret));
		return ret;
	}
	if (fstat(fd, &st) < 0) {
		ret = -errno;
		bci_message(err, err_size, "%s: %s", path, strerror(-ret));
		goto out_fd;
	}
	if (!S_ISREG(st.st_mode) || st.st_size == 0) {
		bci_message(err, err_size, "%s: not an ELF file", path);
		ret = S_ISREG(st.st_mode) ? -ENOEXEC : -EISDIR;
		goto out_fd;
	}
	map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	if (map == MAP_FAILED) {
		ret = -errno;
		bci_message(err, err_size, "%s: %s", path, strerror(-ret));
		goto out_fd;
	}
	ret = builder_elf_parse(map, (size_t)st.st_size, path, info, err, err_size);
	munmap(map, (size_t)st.st_size);
out_fd:
	close(fd);
	return ret;
}

/* ---- closure ---- */

/* Lexically normalizes an absolute path in place: no "//", ".", ".." left. */
/*
 * Drops "." and ".." components and repeated slashes in place. The result is
 * never longer than @path: a relative path stays relative (its first
 * component gets no slash; a ".." with nothing left to drop is kept).
 */
static void elf_normalize(char *path)
{
	bool absolute = path[0] == '/';
	char *out = path, *in = path;

	if (!*path)
		return;
	while (*in) {
		while (*in == '/')
			in++;
		if (!*in)
			break;
		char *end = strchrnul(in, '/');
		size_t n = (size_t)(end - in);

		if (n == 1 && in[0] == '.') {
			/* skip */
		} else if (n == 2 && in[0] == '.' && in[1] == '.') {
			bool kept_up = !absolute && out - path >= 2 && out[-1] == '.' && out[-2] == '.' &&
				       (out - path == 2 || out[-3] == '/');

			if (out > path && !kept_up) {
				while (out > path && *--out != '/')
					;
			} else if (!absolute) {
				if (out > path)
					*out++ = '/';
				memcpy(out, "..", 2);
				out += 2;
			}
			/* An absolute path's ".." at the root stays at the root. */
		} else {
			if (absolute || out > path)
				*out++ = '/';
			memmove(out, in, n);
			out += n;
		}
		in = end;
	}
	if (out == path)
		*out++ = absolute ? '/' : '.';
	*out = '\0';
}

static int closure_add_conf(struct builder_elf_closure *c, const char *image_conf, int depth);

/* ld.so.conf: one directory per line, "include GLOB", '#' comments. */
static int closure_read_conf_file(struct builder_elf_closure *c, const char *host_path, int depth)
{
	char line[4096];
	FILE *f = fopen(host_path, "re");
	int ret = 0;

	if (!f)
		return errno == ENOENT ? 0 : -errno;
	while (!ret && fgets(line, sizeof(line), f)) {
		char *p = line, *hash = strchr(line, '#');

		if (hash)
			*hash = '\0';
		p += strspn(p, " \t");
		p[strcspn(p, "\r\n")] = '\0';
		for (size_t n = strlen(p); n && (p[n - 1] == ' ' || p[n - 1] == '\t'); n--)
			p[n - 1] = '\0';
		if (!*p)
			continue;
		if (!strncmp(p, "include", 7) && (p[7] == ' ' || p[7] == '\t')) {
			p += 8;
			p += strspn(p, " \t");
			ret = closure_add_conf(c, p, depth + 1);
		} else if (p[0] == '/') {
			elf_normalize(p);
			if (!bci_strv_contains(&c->search_dirs, p))
				ret = bci_strv_add(&c->search_dirs, p);
		}
	}
	fclose(f);
	return ret;
}

/* @pattern is an image path glob (relative ones are relative to /etc, as ldconfig does). */
static int closure_add_conf(struct builder_elf_closure *c, const char *pattern, int depth)
{
	char *host_pattern;
	glob_t g;
	int ret = 0;

	if (depth > 8)
		return 0;
	if (asprintf(&host_pattern, "%s%s%s", c->sysroot, pattern[0] == '/' ? "" : "/etc/", pattern) < 0)
		return -ENOMEM;
	if (glob(host_pattern, 0, NULL, &g) == 0) {
		for (size_t i = 0; i < g.gl_pathc && !ret; i++)
			ret = closure_read_conf_file(c, g.gl_pathv[i], depth);
		globfree(&g);
	}
	free(host_pattern);
	return ret;
}

int builder_elf_closure_init(struct builder_elf_closure *c, const char *sysroot,
			     char *err, size_t err_size)
{
	int ret;

	memset(c, 0, sizeof(*c));
	if (!sysroot || !strcmp(sysroot, "/"))
		sysroot = "";
	c->sysroot = strdup(sysroot);
	if (!c->sysroot)
		return -ENOMEM;
	ret = closure_add_conf(c, "/etc/ld.so.conf", 0);
	for (size_t i = 0; !ret && i < sizeof(elf_standard_dirs) / sizeof(*elf_standard_dirs); i++)
		if (!bci_strv_contains(&c->search_dirs, elf_standard_dirs[i]))
			ret = bci_strv_add(&c->search_dirs, elf_standard_dirs[i]);
	if (ret < 0) {
		bci_message(err, err_size, "%s/etc/ld.so.conf: %s", c->sysroot, strerror(-ret));
		builder_elf_closure_free(c);
	}
	return ret;
}

void builder_elf_closure_free(struct builder_elf_closure *c)
{
	for (size_t i = 0; i < c->count; i++) {
		free(c->files[i].source);
		free(c->files[i].image_path);
		free(c->files[i].needed_by);
		free(c->files[i].link_target);
		free(c->files[i].script_interpreter);
	}
	free(c->files);
	bci_strv_free(&c->search_dirs);
	free(c->sysroot);
	memset(c, 0, sizeof(*c));
}

static int closure_has(const struct builder_elf_closure *c, const char *image_path)
{
	for (size_t i = 0; i < c->count; i++)
		if (!strcmp(c->files[i].image_path, image_path))
			return 1;
	return 0;
}

static int closure_push(struct builder_elf_closure *c, const char *source, const char *image_path,
			const char *needed_by, const char *link_target)
{
	struct builder_elf_file *bigger = realloc(c->files, (c->count + 1) * sizeof(*bigger));
	struct builder_elf_file *f;

	if (!bigger)
		return -ENOMEM;
	c->files = bigger;
	f = &c->files[c->count];
	f->source = strdup(source);
	f->image_path = strdup(image_path);
	f->needed_by = needed_by ? strdup(needed_by) : NULL;
	f->link_target = link_target ? strdup(link_target) : NULL;
	f->script_interpreter = NULL;
	if (!f->source || !f->image_path || (needed_by && !f->needed_by) || (link_target && !f->link_target)) {
		free(f->source);
		free(f->image_path);
		free(f->needed_by);
		free(f->link_target);
		return -ENOMEM;
	}
	c->count++;
	return 0;
}

/* The object being resolved: where it is and what it inherits. */
struct closure_object {
	const char *source, *image_path;
	const struct builder_elf_info *info;
	char **inherited_rpath;	/* (host, image) folder pairs from the loaders' DT_RPATH */
	size_t inherited_count;
};

/*
 * Expands one DT_RPATH/DT_RUNPATH list of an object into directories appended
 * to @dirs as pairs: the host folder to look in, then the image folder the
 * loader will see. $ORIGIN is the object's folder: on the host where its
 * file is (@source), in the image where it lands (@image_path). Relative
 * entries depend on the cwd at run time: skipped.
 */
static int closure_expand(const char *sysroot, const char *list, const char *source,
			  const char *image_path, struct bci_strv *dirs)
{
	char *copy = strdup(list), *save = NULL;
	int ret = 0;

	if (!copy)
		return -ENOMEM;
	for (char *entry = strtok_r(copy, ":", &save); entry && !ret; entry = strtok_r(NULL, ":", &save)) {
		char expanded[4096];
		size_t used = 0;
		const char *p = entry;

		while (*p && used < sizeof(expanded) - 1) {
			const char *value = NULL;
			size_t skip = 0;

			if (!strncmp(p, "$ORIGIN", 7) || !strncmp(p, "${ORIGIN}", 9)) {
				skip = p[1] == '{' ? 9 : 7;
				value = "";	/* filled below */
			} else if (!strncmp(p, "$LIB", 4) || !strncmp(p, "${LIB}", 6)) {
				skip = p[1] == '{' ? 6 : 4;
				value = "lib/x86_64-linux-gnu";
			} else if (!strncmp(p, "$PLATFORM", 9) || !strncmp(p, "${PLATFORM}", 11)) {
				skip = p[1] == '{' ? 11 : 9;
				value = "x86_64";
			}
			if (!value) {
				expanded[used++] = *p++;
				continue;
			}
			if (!*value) {
				const char *slash = strrchr(image_path, '/');
				size_t n = slash ? (size_t)(slash - image_path) : 0;

				if (n >= sizeof(expanded) - 1 - used)
					break;
				memcpy(expanded + used, image_path, n);
				used += n;
			} else {
				size_t n = strlen(value);

				if (n >= sizeof(expanded) - 1 - used)
					break;
				memcpy(expanded + used, value, n);
				used += n;
			}
			p += skip;
		}
		expanded[used] = '\0';
		if (expanded[0] != '/')
			continue;
		{
			char host[8192];
			const char *slash = strrchr(source, '/');
			size_t dir_len = strlen(image_path) - strlen(strrchr(image_path, '/'));

			/* An entry led by $ORIGIN starts with the object's image folder. */
			if ((!strncmp(entry, "$ORIGIN", 7) || !strncmp(entry, "${ORIGIN}", 9)) &&
			    slash && !strncmp(expanded, image_path, dir_len))
				snprintf(host, sizeof(host), "%.*s%s", (int)(slash - source), source,
					 expanded + dir_len);
			else
				snprintf(host, sizeof(host), "%s%s", sysroot, expanded);
			elf_normalize(host);
			elf_normalize(expanded);
			ret = bci_strv_add(dirs, host);
			if (!ret)
				ret = bci_strv_add(dirs, expanded);
		}
	}
	free(copy);
	return ret;
}

/* Is the host file @path an ELF object the loader would accept for @machine? */
static int closure_acceptable(const char *path, uint16_t machine)
{
	struct builder_elf_info info;
	struct stat st;
	int ret;

	if (stat(path, &st) < 0 || !S_ISREG(st.st_mode))
		return 0;
	ret = builder_elf_read(path, &info, NULL, 0);
	if (ret < 0)
		return 0;
	ret = info.machine == machine;
	builder_elf_info_clear(&info);
	return ret;
}

static int closure_visit(struct builder_elf_closure *c, const char *source, const char *image_path,
			 const char *needed_by, char **inherited, size_t inherited_count,
			 char *err, size_t err_size);

/*
 * Finds @name in @dirs, pairs of (host folder, image folder) when @pairs, else
 * image folders under the sysroot; on success *@source and *@image are malloc'ed.
 */
static int closure_search(struct builder_elf_closure *c, char *const *dirs, size_t count, int pairs,
			  const char *name, uint16_t machine, char **source, char **image)
{
	for (size_t i = 0; i < count; i += pairs ? 2 : 1) {
		char *host;
		const char *image_dir = pairs ? dirs[i + 1] : dirs[i];

		if (pairs ? asprintf(&host, "%s/%s", dirs[i], name) < 0 :
			    asprintf(&host, "%s%s/%s", c->sysroot, dirs[i], name) < 0)
			return -ENOMEM;
		if (closure_acceptable(host, machine)) {
			*source = host;
			if (asprintf(image, "%s/%s", strcmp(image_dir, "/") ? image_dir : "", name) < 0) {
				free(host);
				return -ENOMEM;
			}
			return 1;
		}
		free(host);
	}
	return 0;
}

static int closure_resolve(struct builder_elf_closure *c, const struct closure_object *o,
			   const char *name, struct bci_strv *rpath_chain,
			   char *err, size_t err_size)
{
	struct bci_strv runpath = { 0 };
	char *source = NULL, *image = NULL;
	int found = 0, ret = 0;

	if (strchr(name, '/')) {
		if (name[0] == '/') {
			if (asprintf(&source, "%s%s", c->sysroot, name) < 0)
				return -ENOMEM;
			found = closure_acceptable(source, o->info->machine);
			if (found && !(image = strdup(name)))
				ret = -ENOMEM;
		}
	} else {
		if (!o->info->runpath)
			found = closure_search(c, rpath_chain->items, rpath_chain->count, 1, name,
					       o->info->machine, &source, &image);
		if (found == 0 && o->info->runpath) {
			ret = closure_expand(c->sysroot, o->info->runpath, o->source, o->image_path,
					     &runpath);
			if (!ret)
				found = closure_search(c, runpath.items, runpath.count, 1, name,
						       o->info->machine, &source, &image);
		}
		if (found == 0) {
			found = closure_search(c, c->search_dirs.items, c->search_dirs.count, 0, name,
					       o->info->machine, &source, &image);
			/* Not a standard dir: the image has no ld.so.cache to point the loader at it. */
			if (found > 0) {
				const char *slash = strrchr(image, '/');
				int standard = 0;

				for (size_t i = 0; i < sizeof(elf_standard_dirs) / sizeof(*elf_standard_dirs); i++)
					if ((size_t)(slash - image) == strlen(elf_standard_dirs[i]) &&
					    !strncmp(image, elf_standard_dirs[i], (size_t)(slash - image)))
						standard = 1;
				if (!standard) {
					free(image);
					if (asprintf(&image, ELF_FALLBACK_DIR "/%s", name) < 0) {
						image = NULL;
						found = -ENOMEM;
					}
				}
			}
		}
		if (found < 0)
			ret = found;
	}
	if (!ret && !found) {
		bci_message(err, err_size, "unresolved library '%s' needed by %s (%s)", name,
			    o->image_path, o->source);
		ret = -ENOENT;
	}
	if (!ret && !closure_has(c, image))
		ret = closure_visit(c, source, image, o->image_path, rpath_chain->items,
				    rpath_chain->count, err, err_size);
	bci_strv_free(&runpath);
	free(source);
	free(image);
	return ret;
}

/*
 * The ELF interpreter at its PT_INTERP path. Debian's is a symlink
 * (/lib64/ld-linux-x86-64.so.2 -> /lib/x86_64-linux-gnu/ld-linux-x86-64.so.2)
 * to the file libc also needs by name: the image gets the same symlink and a
 * single copy of the loader.
 */
static int closure_add_interp(struct builder_elf_closure *c, const char *interp, uint16_t machine,
			      const char *needed_by, char *err, size_t err_size)
{
	char *host, *target_image = NULL, *target_host = NULL, link[4096];
	struct stat st;
	ssize_t n = -1;
	int ret = 0;

	if (asprintf(&host, "%s%s", c->sysroot, interp) < 0)
		return -ENOMEM;
	if (access(host, R_OK) < 0) {
		bci_message(err, err_size, "ELF interpreter %s of %s not found (%s)", interp, needed_by, host);
		ret = -ENOENT;
		goto out;
	}
	if (lstat(host, &st) == 0 && S_ISLNK(st.st_mode))
		n = readlink(host, link, sizeof(link) - 1);
	if (n > 0) {
		link[n] = '\0';
		if ((link[0] == '/' ? asprintf(&target_image, "%s", link) :
		     asprintf(&target_image, "%.*s/%s", (int)(strrchr(interp, '/') - interp), interp, link)) < 0) {
			target_image = NULL;
			ret = -ENOMEM;
			goto out;
		}
		elf_normalize(target_image);
		if (asprintf(&target_host, "%s%s", c->sysroot, target_image) < 0) {
			target_host = NULL;
			ret = -ENOMEM;
			goto out;
		}
	}
	/* Not a symlink, or one to no loader in the sysroot: the file itself is copied. */
	if (!target_host || !closure_acceptable(target_host, machine)) {
		ret = closure_push(c, host, interp, needed_by, NULL);
		goto out;
	}
	if (!closure_has(c, target_image))
		ret = closure_push(c, target_host, target_image, needed_by, NULL);
	if (!ret)
		ret = closure_push(c, host, interp, needed_by, link);
out:
	free(target_host);
	free(target_image);
	free(host);
	return ret;
}

/* A file that is not ELF is added as it is; a script's "#!" interpreter is noted. */
static int closure_note_script(struct builder_elf_file *f, char *err, size_t err_size)
{
	char line[256], *interp;
	ssize_t n;
	int fd = open(f->source, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return 0;	/* builder_elf_read() just read it: nothing new to say */
	n = read(fd, line, sizeof(line) - 1);
	close(fd);
	if (n < 2 || line[0] != '#' || line[1] != '!')
		return 0;
	line[n] = '\0';
	interp = line + 2 + strspn(line + 2, " \t");
	interp[strcspn(interp, " \t\r\n")] = '\0';
	if (interp[0] != '/') {
		bci_message(err, err_size, "script %s (%s): interpreter '%s' is not an absolute path", f->image_path,
			    f->source, interp);
		return -EINVAL;
	}
	f->script_interpreter = strdup(interp);
	return f->script_interpreter ? 0 : -ENOMEM;
}

static int closure_visit(struct builder_elf_closure *c, const char *source, const char *image_path,
			 const char *needed_by, char **inherited, size_t inherited_count,
			 char *err, size_t err_size)
{
	struct builder_elf_info info;
	struct closure_object o = { .source = source, .image_path = image_path, .info = &info };
	struct bci_strv chain = { 0 };
	int ret;

	ret = closure_push(c, source, image_path, needed_by, NULL);
	if (ret < 0)
		return ret;
	ret = builder_elf_read(source, &info, err, err_size);
	if (ret == -ENOEXEC && !needed_by)
		return closure_note_script(&c->files[c->count - 1], err, err_size);
	if (ret < 0)
		return ret;
	if (info.interp && !closure_has(c, info.interp)) {
		ret = closure_add_interp(c, info.interp, info.machine, image_path, err, err_size);
		if (ret < 0)
			goto out;
	}
	/* DT_RPATH: this object's own entries first, then those it inherited. */
	if (info.rpath && !info.runpath)
		ret = closure_expand(c->sysroot, info.rpath, source, image_path, &chain);
	for (size_t i = 0; !ret && i < inherited_count; i++)
		ret = bci_strv_add(&chain, inherited[i]);
	for (size_t i = 0; !ret && i < info.needed_count; i++)
		ret = closure_resolve(c, &o, info.needed[i], &chain, err, err_size);
out:
	bci_strv_free(&chain);
	builder_elf_info_clear(&info);
	return ret;
}

int builder_elf_closure_add(struct builder_elf_closure *c, const char *source,
			    const char *image_path, char *err, size_t err_size)
{
	if (closure_has(c, image_path))
		return 0;
	return closure_visit(c, source, image_path, NULL, NULL, 0, err, err_size);
}
