// SPDX-License-Identifier: MIT
/* ELF dlopen metadata's descriptor (format in dlopen_note.h), read with json-c. */
#include "dlopen_note.h"
#include "message.h"

#include <errno.h>
#include <json.h>
#include <stdlib.h>
#include <string.h>

void bci_dlopen_libraries_free(struct bci_dlopen_library *libs, size_t count)
{
	for (size_t i = 0; i < count; i++) {
		for (size_t j = 0; j < libs[i].count; j++)
			free(libs[i].sonames[j]);
		free(libs[i].sonames);
	}
	free(libs);
}

static int library_read(struct json_object *o, size_t index, struct bci_dlopen_library *lib,
			char *err, size_t err_size)
{
	struct json_object *sonames, *priority;
	const char *word;
	size_t n;

	if (!json_object_is_type(o, json_type_object)) {
		bci_message(err, err_size, "entry %zu: not an object", index);
		return -EINVAL;
	}
	if (!json_object_object_get_ex(o, "soname", &sonames) ||
	    !json_object_is_type(sonames, json_type_array) ||
	    (n = json_object_array_length(sonames)) == 0) {
		bci_message(err, err_size, "entry %zu: no \"soname\" array of names", index);
		return -EINVAL;
	}
	lib->priority = BCI_DLOPEN_RECOMMENDED;
	if (json_object_object_get_ex(o, "priority", &priority)) {
		word = json_object_is_type(priority, json_type_string) ?
			       json_object_get_string(priority) : "";
		if (!strcmp(word, "required"))
			lib->priority = BCI_DLOPEN_REQUIRED;
		else if (!strcmp(word, "suggested"))
			lib->priority = BCI_DLOPEN_SUGGESTED;
		else if (strcmp(word, "recommended")) {
			bci_message(err, err_size, "entry %zu: priority '%s' is none of required, "
				    "recommended, suggested", index, word);
			return -EINVAL;
		}
	}
	lib->sonames = calloc(n, sizeof(*lib->sonames));
	if (!lib->sonames)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		struct json_object *name = json_object_array_get_idx(sonames, i);

		word = json_object_is_type(name, json_type_string) ? json_object_get_string(name) : "";
		if (!word[0] || strchr(word, '/')) {
			bci_message(err, err_size, "entry %zu: soname %zu is not a library's name "
				    "(a string without '/')", index, i);
			return -EINVAL;
		}
		lib->sonames[i] = strdup(word);
		if (!lib->sonames[i])
			return -ENOMEM;
		lib->count = i + 1;
	}
	return 0;
}

int bci_dlopen_note_parse(const char *desc, size_t len, struct bci_dlopen_library **libs,
			  size_t *count, char *err, size_t err_size)
{
	const char *nul = memchr(desc, '\0', len);
	struct bci_dlopen_library *found = NULL, *grown;
	struct json_tokener *tok;
	struct json_object *top = NULL;
	size_t n = 0, text_len;
	int ret = 0;

	if (!nul) {
		bci_message(err, err_size, "the descriptor does not end with a NUL");
		return -EINVAL;
	}
	text_len = (size_t)(nul - desc);
	tok = json_tokener_new();
	if (!tok)
		return -ENOMEM;
	json_tokener_set_flags(tok, JSON_TOKENER_STRICT | JSON_TOKENER_VALIDATE_UTF8);
	if (text_len < INT32_MAX)
		top = json_tokener_parse_ex(tok, desc, (int)text_len + 1); /* its NUL ends the text */
	if (!top && json_tokener_get_error(tok) != json_tokener_success) {
		bci_message(err, err_size, "not JSON: %s",
			    json_tokener_error_desc(json_tokener_get_error(tok)));
		ret = -EINVAL;
		goto out;
	}
	if (json_tokener_get_parse_end(tok) != text_len) {
		bci_message(err, err_size, "not JSON: text after the value");
		ret = -EINVAL;
		goto out;
	}
	/* json-c's null is no object at all. */
	if (!json_object_is_type(top, json_type_array)) {
		bci_message(err, err_size, "not a JSON array");
		ret = -EINVAL;
		goto out;
	}
	n = json_object_array_length(top);
	found = calloc(n ? n : 1, sizeof(*found));
	if (!found) {
		ret = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < n && !ret; i++)
		ret = library_read(json_object_array_get_idx(top, i), i, &found[i], err, err_size);
	if (ret == 0 && n) {
		grown = realloc(*libs, (*count + n) * sizeof(*grown));
		if (!grown) {
			ret = -ENOMEM;
		} else {
			memcpy(grown + *count, found, n * sizeof(*grown));
			*libs = grown;
			*count += n;
			free(found);
			found = NULL;
		}
	}
out:
	if (found)
		bci_dlopen_libraries_free(found, n);
	json_object_put(top);
	json_tokener_free(tok);
	return ret;
}
