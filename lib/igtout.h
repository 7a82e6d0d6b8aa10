/* SPDX-License-Identifier: MIT */
/*
 * Transitional: the old names of igt_protocol.h, kept only while executor/
 * still spells them (branch exec-core switches it); remove with the last user.
 */
#ifndef BCI_IGTOUT_H
#define BCI_IGTOUT_H

#include "igt_protocol.h"

#define bci_igtout bci_igt_output
#define bci_igtout_span bci_igt_span
#define BCI_IGTOUT_SUBTEST_START BCI_IGT_MARK_SUBTEST_START
#define BCI_IGTOUT_SUBTEST_RESULT BCI_IGT_MARK_SUBTEST_RESULT
#define BCI_IGTOUT_DYNAMIC_START BCI_IGT_MARK_DYNAMIC_START
#define BCI_IGTOUT_DYNAMIC_RESULT BCI_IGT_MARK_DYNAMIC_RESULT
#define bci_igtout_parse bci_igt_output_parse
#define bci_igtout_release bci_igt_output_release
#define bci_igtout_map_result bci_igt_result_from_word
#define bci_igtout_piglit_name bci_igt_piglit_name
#define bci_igtout_piglit_name_dynamic bci_igt_piglit_name_dynamic
#define BCI_IGTOUT_SUSPEND_BINARY BCI_IGT_SUSPEND_BINARY

#endif
