// SPDX-License-Identifier: GPL-3.0-or-later
/* Test driver: `erg-pdu-probe ARGS` == `erg pdu probe ARGS`. */
#include "erg_cli.h"

int main(int argc, char **argv) { return erg_pdu_probe_cli(argc, argv); }
