// SPDX-License-Identifier: GPL-3.0-or-later
/* Internal to erg jobs (web/jobs.c: the list, its documents and the push;
 * web/jobs_store.c: erg's own fields; web/jobs_slurm.c: Slurm's sacct and
 * sacctmgr as child processes). */
#ifndef ERG_JOBS_INT_H
#define ERG_JOBS_INT_H

#include <stddef.h>
#include <stdint.h>

#define JOBS_SACCT_BATCH 200 /* job ids per sacct call */

/* One job: erg's energy over the period, erg's own user and nodes, and,
 * when sacct knows it, Slurm's accounting fields. */
struct jobs_job {
  char id[32];
  double energy_j, known_s, peak_w;
  double facility_j, co2_g; /* integrated cell by cell (report_build); NAN: no factor */
  /* The GPU part of energy_j: Σ over its nodes of its gpu_job archives
   * (jobs_erg_fields); gpu_known once a node of the job has GPU archives
   * at all (else GPUEnergyJ is empty: a CPU node, or an older ergd). */
  double gpu_j;
  int gpu_known;
  /* Its 95 % interval's parts (docs/model.md, "Uncertainty"): Σ over the
   * cluster's job_sd archives (sd, adds linearly) and job_var (variance),
   * over the period; unc_known once a store has them for the job. */
  double unc_sd_j, unc_var_j;
  int unc_known;
  int slurm; /* 1 when sacct returned the job */
  char user[64], account[64], partition[64], name[256], state[32], nodes[256];
  char admin_comment[1024];
  int64_t start_s, end_s;  /* sacct's; 0: unknown (pending, running, no sacct) */
  int64_t first_s, last_s; /* the job's first and last cell with energy (erg's) */
};

/* The job with that id among jobs[0..n), or NULL. */
struct jobs_job *jobs_find(struct jobs_job *jobs, size_t n, const char *id);

/* erg's own fields (web/jobs_store.c), from every store of o: nodes, the
 * nodes that hold the job's archive (nodes/<n>/job/), by name; user, from
 * what ergd stored per node (job/users.tsv: the job's uid; its name from
 * user/names.tsv, else the uid); name, the job's first command there
 * (job/commands.tsv) until Slurm gives one; gpu_j, its gpu_job archives over o's
 * period. Jobs erg knows nothing of keep "". */
struct erg_report_options;
void jobs_erg_fields(const struct erg_report_options *o, struct jobs_job *jobs, size_t n);

struct jobs_slurm {
  const char *sacct, *sacctmgr; /* program paths or names (PATH lookup) */
};

/* Fills the Slurm fields of jobs[0..n) from sacct (user and nodes only
 * where erg has none, or only a uid); jobs sacct does not know keep
 * slurm = 0. -1 with a reason when sacct cannot run or fails:
 * the caller still has erg's fields. */
int jobs_slurm_fill(const struct jobs_slurm *s, struct jobs_job *jobs, size_t n, char *why,
                    size_t whylen);

/* Writes erg's numbers (fields "erg_*", ';' separated) into job's
 * AdminComment through sacctmgr, keeping the comment's other fields. */
int jobs_slurm_push(const struct jobs_slurm *s, const struct jobs_job *job, const char *fields,
                    char *why, size_t whylen);

/* 1 if an AdminComment already holds erg's energy. */
int jobs_comment_has_erg(const char *admin_comment);
/* The AdminComment with erg's fields replaced by `fields`, into out. */
void jobs_comment_merge(const char *old, const char *fields, char *out, size_t outlen);

#endif
