/* SPDX-License-Identifier: MIT */
/*
 * The commands of bootci-aggregator, the CI master, for main.c. Each takes the
 * arguments after the command name (argv[0] is the command) and returns the
 * process's exit code: 0 success, 1 failure (a message on stderr), 2 usage
 * error. What they share is command.h's.
 */
#ifndef BCI_AGGREGATOR_COMMANDS_H
#define BCI_AGGREGATOR_COMMANDS_H

int bci_cmd_ingest(int argc, char **argv);
int bci_cmd_serve(int argc, char **argv);
int bci_cmd_publish(int argc, char **argv);
/* report/build_command.c, command.c, export_command.c, metrics_command.c */
int bci_cmd_build(int argc, char **argv);
int bci_cmd_machine(int argc, char **argv);
int bci_cmd_report(int argc, char **argv);
int bci_cmd_export(int argc, char **argv);
int bci_cmd_metrics(int argc, char **argv);
/* schedule/command.c */
int bci_cmd_schedule(int argc, char **argv);
/* mail/command.c */
int bci_cmd_mail(int argc, char **argv);
/* patchwork/command.c, bisect_command.c */
int bci_cmd_patchwork(int argc, char **argv);
int bci_cmd_bisect(int argc, char **argv);

#endif
