/* SPDX-License-Identifier: MIT */
/*
 * The results generator: turns a results directory in igt_runner's layout
 * (metadata.txt, joblist.txt, uname.txt, starttime.txt, endtime.txt,
 * aborted.txt, N/{journal,out,err,dmesg}.txt) into results.json in piglit
 * format, results_version 10, with the same tests, results, overrides,
 * totals and runtimes igt_runner's resultgen.c produces from it.
 *
 * Memory stays bounded whatever the size of the run: job folders are read
 * one at a time and their tests streamed out before the next is opened;
 * what is kept across jobs is one small counter set per test binary (for
 * "totals" and "runtimes", written after "tests"). An out.txt or err.txt
 * up to the file limit (BCI_RESULTGEN_MAX_FILE) is read whole; dmesg.txt is
 * read a line at a time. A file over the limit never fails the run: every
 * line of it still decides results (protocol lines of out/err, subtest
 * starts, ignore regexes and warnings of dmesg), but results.json only
 * embeds its first and last half-limit, with a marker line saying how many
 * bytes were left out where, and a warning names the file. What one job
 * holds is then at most a few times the limit, plus a little per test.
 *
 * Deliberate differences from igt_runner, all on input igt_runner itself
 * never writes: a malformed metadata.txt, joblist.txt or journal.txt line is
 * an error (igt_runner guesses); a NUL byte in a string is written as
 * \u0000 (igt_runner emits invalid UTF-8); socket "comms" dumps are refused
 * (bootci's executor writes text); attachments/ folders are not listed; a
 * test name that two jobs both produce appears twice instead of merged.
 */
#ifndef BCI_RESULTGEN_H
#define BCI_RESULTGEN_H

#include <stddef.h>
#include <stdio.h>

#define BCI_RESULTGEN_MAX_FILE ((size_t)64 << 20)

struct bci_resultgen_options {
	FILE *warnings;		/* where warnings go; NULL: stderr */
	size_t max_file;	/* the file limit; 0: BCI_RESULTGEN_MAX_FILE */
};

/*
 * Writes the results.json of @results_dir to @out. Returns 0, or -errno
 * with a message naming the file (and line) in @err. On error the output
 * written so far is incomplete: callers write to a temporary and drop it.
 */
int bci_resultgen_write(const char *results_dir, FILE *out, char *err, size_t err_size);
/* The same with @options (NULL: the defaults). Warnings are "warning: ..." lines. */
int bci_resultgen_write_options(const char *results_dir, FILE *out,
				const struct bci_resultgen_options *options,
				char *err, size_t err_size);

#endif
