// SPDX-License-Identifier: MIT
/* The master's names (names.h): one check per kind. */
#include "names.h"

#include "manifest.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

/* Neither "" nor "." nor "..": a name that can stand for a path component. */
static bool component_ok(const char *name)
{
	return name[0] && strcmp(name, ".") && strcmp(name, "..");
}

bool bci_name_machine_ok(const char *name)
{
	return bci_manifest_word_ok(name);
}

bool bci_name_run_id_ok(const char *name)
{
	return bci_manifest_word_ok(name);
}

bool bci_name_build_ok(const char *name)
{
	char folder[BCI_NAME_FOLDER_MAX + 1];

	for (const char *p = name; *p; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f || *p == '/')
			return false;
	return component_ok(name) && bci_name_folder(name, folder, sizeof(folder)) == 0;
}

bool bci_name_published_build_ok(const char *name)
{
	return bci_manifest_word_ok(name);
}

bool bci_name_build_file_ok(const char *name)
{
	return bci_manifest_word_ok(name);
}

bool bci_name_known_good_ok(const char *name)
{
	return bci_manifest_word_ok(name);
}

bool bci_name_tree_ok(const char *name)
{
	return bci_manifest_word_ok(name);
}

bool bci_name_tag_ok(const char *name)
{
	return bci_manifest_word_ok(name);
}

bool bci_name_test_ok(const char *name)
{
	for (const char *p = name; *p; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			return false;
	return component_ok(name);
}

bool bci_name_kcidb_origin_ok(const char *name)
{
	return name[0] && strspn(name, "abcdefghijklmnopqrstuvwxyz0123456789_") == strlen(name);
}

void bci_name_clean(const char *name, char *out, size_t size)
{
	static const char kept[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.+=_-";
	size_t i;

	for (i = 0; name[i] && i + 1 < size; i++)
		out[i] = strchr(kept, name[i]) ? name[i] : '-';
	out[i] = '\0';
}

/* A byte a folder keeps as it is: what a file name, a URL path and a mail dot-atom all take. */
static bool folder_kept(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '+' || c == '_' || c == '-';
}

int bci_name_folder(const char *name, char *out, size_t size)
{
	static const char hex[] = "0123456789ABCDEF";
	size_t o = 0;

	/* "=" alone: no other name is written so ('=' always starts an escape). */
	if (!name[0])
		return snprintf(out, size, "=") >= (int)size ? -ENAMETOOLONG : 0;
	for (size_t i = 0; name[i]; i++) {
		unsigned char c = (unsigned char)name[i];
		/* A dot that would start or end the name, or follow another, is escaped. */
		bool kept = folder_kept((char)c) ||
			    (c == '.' && i > 0 && name[i + 1] && name[i - 1] != '.');
		size_t need = kept ? 1 : 3;

		if (o + need >= size) {
			out[o] = '\0';
			return -ENAMETOOLONG;
		}
		if (kept) {
			out[o++] = (char)c;
		} else {
			out[o++] = '=';
			out[o++] = hex[c >> 4];
			out[o++] = hex[c & 15];
		}
	}
	out[o] = '\0';
	return 0;
}

int bci_name_message_id(const char *in, char *out, size_t size)
{
	size_t n;

	in += strspn(in, " \t");
	if (*in == '<')
		in++;
	n = strcspn(in, ">");
	if (!n || n >= size || (in[n] == '>' && in[n + 1 + strspn(in + n + 1, " \t")]))
		return -EINVAL;
	memcpy(out, in, n);
	out[n] = '\0';
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)out[i] <= 0x20 || (unsigned char)out[i] > 0x7e || out[i] == '<' ||
		    out[i] == '"' || out[i] == '\\')
			return -EINVAL;
	return strchr(out, '@') ? 0 : -EINVAL;
}

bool bci_name_message_id_ok(const char *name)
{
	char id[BCI_NAME_MESSAGE_ID_MAX + 1];

	return bci_name_message_id(name, id, sizeof(id)) == 0;
}
