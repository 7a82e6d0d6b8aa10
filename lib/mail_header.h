/* SPDX-License-Identifier: MIT */
/*
 * A mail header's value as a person reads it: RFC 5322 unfolding and RFC
 * 2047 encoded words; and the writer of such words for the master's mail. git format-patch writes a non-ASCII author or subject
 * as encoded words, folded over lines:
 *
 *   From: =?UTF-8?q?Ren=C3=A9=20D=C3=BCsseldorf?= <rene@example.org>
 *   Subject: [PATCH] =?UTF-8?q?drm/i915:=20Pr=C3=BCfe=20den=20R=C3=BCckgabewer?=
 *    =?UTF-8?q?t=20von=20...?=
 *
 * Unfolding drops a line break (CRLF or LF) followed by a blank (SP or
 * TAB), the blank kept. An encoded word is "=?CHARSET?ENCODING?TEXT?=":
 * CHARSET a token (case-insensitive) with an optional RFC 2231 language
 * ("UTF-8*en"), ENCODING B (base64) or Q (quoted-printable with '_' for a
 * space; either case), TEXT printable ASCII characters, no '?' and no
 * blank (none: the word is read as nothing, as git and Python read it). Read the way git am reads them: a word is decoded wherever
 * it stands (inside a quoted display name too), and the blanks between two
 * adjacent decoded words are dropped (RFC 2047 6.2). The charsets read are
 * UTF-8 and US-ASCII, as they are, and ISO-8859-1 (latin1), converted to
 * UTF-8. Adjacent words of one run may split a UTF-8 character between
 * them (RFC 2047 forbids it, some mailers do it): the run is read whole.
 *
 * A word that does not decode to printable text is left exactly as written,
 * with the blanks around it: bad base64 or Q, an unknown charset, a result
 * that is not valid UTF-8 (or not ASCII for US-ASCII), or one holding a
 * NUL, a control character (C0, DEL, C1) or a character split with no
 * adjacent word to end it. So the decoded text never holds a line break
 * the raw header did not: a header cannot be smuggled in by decoding.
 * Text outside encoded words is copied as written (after unfolding).
 */
#ifndef BCI_MAIL_HEADER_H
#define BCI_MAIL_HEADER_H

#include <stddef.h>

/*
 * The longest decoded value of @len bytes: a word's text decodes to at most
 * 3 bytes for 4 (base64), each of them 2 bytes of UTF-8 at most (latin1).
 */
#define BCI_MAIL_HEADER_DECODED_MAX(len) ((len) + (len) / 2 + 1)

/*
 * Unfolds and decodes the header value @value (@len bytes; a NUL ends it
 * earlier) into *@out: one malloc'ed, NUL-terminated buffer of at most
 * BCI_MAIL_HEADER_DECODED_MAX(@len) + 1 bytes, the caller's to free(). The
 * number of encoded words decoded (0: *@out is @value unfolded), or -ENOMEM
 * (*@out NULL). Malformed words are not errors: they stay as written.
 */
int bci_mail_header_decode(const char *value, size_t len, char **out);

/*
 * Only unfolds @value (@len bytes; a NUL ends it earlier) into *@out
 * (malloc'ed, at most @len + 1 bytes), for a header whose encoded words
 * are no text (a Message-ID). 0 or -ENOMEM (*@out NULL).
 */
int bci_mail_header_unfold(const char *value, size_t len, char **out);

/*
 * The writer: header @name (at most 40 characters) with @text (UTF-8) as its
 * value in B encoded words of whole characters, each on a line of its own
 * of at most 76 characters ("Name: =?UTF-8?B?...?=\n =?UTF-8?B?...?="),
 * without a final newline, into *@out (malloc'ed). What the reader makes of
 * the value is @text. 0, -EINVAL (a name too long) or -ENOMEM.
 */
int bci_mail_header_encode(const char *name, const char *text, char **out);

#endif
