/* SPDX-License-Identifier: MIT */
/* bootci's version: what every program's --version and a run's manifest say. */
#ifndef BCI_VERSION_H
#define BCI_VERSION_H

#define BCI_VERSION "0.1"

#endif
