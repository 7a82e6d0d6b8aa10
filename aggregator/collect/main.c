// SPDX-License-Identifier: MIT
/*
 * bootci-collect: the known-good image's program. Every run on the results
 * partition that is over goes to the CI master (collect.h, command.c).
 */
#include "collect.h"

int main(int argc, char **argv)
{
	return bci_collect_command(argc, argv);
}
