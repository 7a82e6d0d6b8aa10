/* SPDX-License-Identifier: MIT */
/*
 * The commands of bootci-aggregator, the CI master. Each takes the arguments after the
 * command name (argv[0] is the command) and returns the process's exit code:
 * 0 success, 1 failure (a message on stderr), 2 usage error.
 */
#ifndef BCI_AGGREGATOR_COMMANDS_H
#define BCI_AGGREGATOR_COMMANDS_H

#include <stdio.h>

/* Prints the usage of every command to @out. */
void bci_aggregator_usage(FILE *out);
/*
 * The exit of a command whose getopt() handed back @opt: -h prints the usage
 * on stdout (0), anything else is a usage error (usage on stderr, 2). A bad
 * operand count passes '?'.
 */
int bci_aggregator_usage_exit(int opt);

int bci_cmd_ingest(int argc, char **argv);
int bci_cmd_serve(int argc, char **argv);
int bci_cmd_publish(int argc, char **argv);
/* aggregator/report/command.c */
int bci_cmd_build(int argc, char **argv);
int bci_cmd_machine(int argc, char **argv);
int bci_cmd_report(int argc, char **argv);
int bci_cmd_export(int argc, char **argv);
int bci_cmd_metrics(int argc, char **argv);
/* aggregator/schedule/command.c */
int bci_cmd_schedule(int argc, char **argv);

#endif
