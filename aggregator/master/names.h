/* SPDX-License-Identifier: MIT */
/*
 * The names the CI master is given, one check per kind: what each allows and
 * why. Every place that takes a name from outside (a URL, the command line,
 * a configuration file, an upload) checks it here, so the same name is never
 * taken by one door and refused by another.
 *
 * A word is [A-Za-z0-9._-], 1 to BCI_MANIFEST_WORD_MAX bytes, not "." or "..":
 * the run archive's manifest defines it (lib/manifest.h) for the machine and
 * the run id it carries, so collect, which writes those, checks the same
 * rule. A word can be a file name, a URL path segment and a shell word as it
 * is, with no quoting or escaping.
 *
 *   kind              rule        why
 *   machine           word        the manifest's; names DATA folders (spool,
 *                                 deploy marks), URL path segments
 *   run id            word        the manifest's; a URL path segment
 *   build             free text:  what `build add` registers and the pages
 *                     no control  show: a URL path segment (/builds/<build>)
 *                     byte, no    carries any other byte percent-encoded; a
 *                     '/', not    static site's folder and the reply's
 *                     "." or "..",Message-ID carry it through
 *                     at most     bci_name_folder(), which no two names share
 *                     255 bytes
 *                     as a folder
 *   published build   word        names DATA/builds/staging/<build>, goes
 *                                 into its jobs' run ids and the scheduler's
 *                                 routes
 *   build file        word        one path component under a build or a
 *                                 known-good image (publishing's routes)
 *   known-good        word        names DATA/known-good/staging/<version>
 *   version
 *   tree (inventory)  word        machines.conf's [tree NAME] header
 *   tag, shard group  word        machines.conf's comma-separated lists
 *   test              no control  an IGT name (igt@binary@subtest@dynamic) as
 *                     byte, not   the store holds it: any other byte, '/',
 *                     "." or ".." blanks and non-ASCII included; never a
 *                                 file name (the store finds a test's logs by
 *                                 its job), the last part of serve's page
 *                                 and result paths, percent-encoded in links
 *                                 ("." and ".." are refused: a browser
 *                                 resolves them out of a path)
 *   KCIDB origin      [a-z0-9_]+  KCIDB I/O v4's schema
 *   Message-ID        <left@right> the series' mail that the report's reply
 *                     (brackets    answers (In-Reply-To, References): one
 *                     and blanks   msg-id, printable ASCII without blank,
 *                     around it    '<', '"' or '\', with an '@'; refused at
 *                     optional)    `build add` and `publish`, not at report time
 *
 * Each function returns true when @name (NUL-terminated) is one of its kind.
 */
#ifndef BCI_MASTER_NAMES_H
#define BCI_MASTER_NAMES_H

#include <stdbool.h>
#include <stddef.h>

bool bci_name_machine_ok(const char *name);
bool bci_name_run_id_ok(const char *name);
bool bci_name_build_ok(const char *name);
bool bci_name_published_build_ok(const char *name);
bool bci_name_build_file_ok(const char *name);
bool bci_name_known_good_ok(const char *name);
bool bci_name_tree_ok(const char *name);
bool bci_name_tag_ok(const char *name);
bool bci_name_test_ok(const char *name);
bool bci_name_kcidb_origin_ok(const char *name);

/*
 * The Message-ID @in (the rule above) without its angle brackets into @out
 * (@size bytes, at most BCI_NAME_MESSAGE_ID_MAX + 1 needed): 0, or -EINVAL
 * when @in is not one Message-ID or does not fit.
 */
#define BCI_NAME_MESSAGE_ID_MAX 997
/* The rule, as a refusal says it. */
#define BCI_NAME_MESSAGE_ID_RULE "<left@right>: printable ASCII with an '@', no blank, no line break"
int bci_name_message_id(const char *in, char *out, size_t size);
bool bci_name_message_id_ok(const char *name);

/*
 * A free-text name made safe as a mail atom, into @out (@size > 0 bytes,
 * cut to fit): [A-Za-z0-9.+=_-] kept, every other byte '-'. Two names may
 * give the same result: a name that must stay apart from others (a build's
 * folder, its reply's Message-ID) takes bci_name_folder().
 */
void bci_name_clean(const char *name, char *out, size_t size);
/*
 * The folder a free-text name (a build, a machine) is written under in a
 * static site, also its part of the reply's Message-ID: a file name, a URL
 * path segment and a mail dot-atom at once, into @out (@size > 0 bytes).
 * [A-Za-z0-9+_-] kept, '.' kept unless it would start or end the result or
 * follow another '.', every other byte (and '=' itself) as "=XX", its value
 * in upper-case hex; "" is "=". No two names give the same folder ("a b" is
 * "a=20b", "a-b" stays "a-b"), never "." or "..". 0, or -ENAMETOOLONG when
 * it does not fit (@out then holds what fitted, cut before an escape).
 */
#define BCI_NAME_FOLDER_MAX 255
int bci_name_folder(const char *name, char *out, size_t size);

#endif
