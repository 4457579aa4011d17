// SPDX-License-Identifier: GPL-3.0-or-later
/* erg's commands (cli/): each parses its options, calls the libraries and
 * prints what they return. argv[0] is the command's name ("report"; for
 * erg pdu probe, "probe"). Each returns the exit code: 0 ok, 1 usage,
 * 2 data or device error. */
#ifndef ERG_CLI_H
#define ERG_CLI_H

/* erg check-config [--agent] FILE (cli/check_config.c) */
int erg_check_config_cli(int argc, char **argv);
/* erg keygen PREFIX (cli/keygen.c) */
int erg_keygen_cli(int argc, char **argv);
/* erg fit (cli/fit.c, fit_common.c, fit_group.c): fit and validate a
 * node's power model, record idle profiles, fit a shared meter's group;
 * see docs/model.md. */
int erg_fit_cli(int argc, char **argv);
/* erg pdu probe (cli/probe.c): a PDU's or meter's identity, levels and
 * readings, with the config section to copy; see docs/pdu.md. */
int erg_pdu_probe_cli(int argc, char **argv);
/* `erg pdu probe --driver ipmi` (erg_pdu_probe_cli hands it over). */
int erg_pdu_probe_ipmi_cli(int argc, char **argv);
/* erg pdu probe --driver redfish (cli/probe_redfish.c): a BMC's power and
 * energy readings per chassis, the one ergd takes; see docs/bmc.md. */
int erg_pdu_probe_redfish_cli(int argc, char **argv);
/* erg report (cli/report.c): energy over a period from the archives, by
 * node or profile key kind, as CSV, JSON or HTML; see docs/report.md. */
int erg_report_cli(int argc, char **argv);
/* erg jobs (cli/jobs.c): per-job energy with Slurm's accounting fields
 * (sacct), and --push into the jobs' AdminComment; see docs/hpc.md. */
int erg_jobs_cli(int argc, char **argv);
/* erg graph (cli/graph.c): the web pages rendered once for the nodes under
 * DIR/nodes (for cron when ergd does not render). */
int erg_graph_cli(int argc, char **argv);

#endif
