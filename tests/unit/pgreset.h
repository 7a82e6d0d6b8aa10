/* SPDX-License-Identifier: MIT */
/*
 * For the unit tests that run against PostgreSQL too (BOOTCI_TEST_STORE_URL,
 * tests/aggregator/store-postgres.t): a fresh database for the next test.
 */
#ifndef BCI_TEST_PGRESET_H
#define BCI_TEST_PGRESET_H

/* Drops every table of the database at @url (its public schema); asserts on failure. */
void pg_reset(const char *url);

#endif
