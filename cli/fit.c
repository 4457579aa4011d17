// SPDX-License-Identifier: GPL-3.0-or-later
/* `erg fit`: read journals, fit, print the held-out validation, write the
 * model (refusing to replace a better one unless --force); record idle
 * profiles (--idle). A shared meter's group (--group) is in fit_group.c. */
#include <getopt.h>
#include <libgen.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli_fit.h"
#include "erg_cli.h"
#include "erg_common.h"

static void cli_usage(FILE *f) {
  fprintf(f,
          "usage: erg fit [--journal FILE]... [--node NODE] [--data-dir DIR] [--out MODEL.json]\n"
          "               [--force] [--json] [--holdout FRACTION | --folds K]\n"
          "               [--progress | --no-progress]\n"
          "               [--idle-profile FILE | --no-idle-profile] [--linear] [--ncpu N]\n"
          "               [--curve-shape auto|monotone|convex]\n"
          "       erg fit --idle --node NODE (--from T --to T | --last DURATION |\n"
          "               --auto [--length DURATION]) [--max-util F] [--out PROFILE.json]\n"
          "               [journal options]\n"
          "       erg fit --group NAME --nodes A,B,... [--form auto|pooled|per-node]\n"
          "               [--idle-split equal|profile|W1,W2,...] [--model-dir DIR]\n"
          "               [--force] [--json] [--holdout F | --folds K] [--linear]\n"
          "               [--data-dir DIR | --journal-dir DIR]\n"
          "Fits the node power model P = idle + sum(beta_k * x_k) from training journals.\n"
          "  --journal FILE    journal to read (repeatable); default JOURNAL_DIR/NODE.csv\n"
          "                    and its rotations NODE.csv.1, .2, ...\n"
          "  --node NODE       node name (checked against the journals, names the model)\n"
          "  --data-dir DIR    collector data directory (default /var/lib/erg)\n"
          "  --journal-dir DIR journals directory (default DATA_DIR/journal)\n"
          "  --model-dir DIR   models directory, for the idle profile (default: the directory\n"
          "                    of --out, else DATA_DIR/models)\n"
          "  --out FILE        write the model; refused if the model already there predicts\n"
          "                    the new model's held-out cells better, unless --force\n"
          "  --json            print the model with its validation as JSON\n"
          "  --holdout F       hold out the last fraction F of the cells (default 0.25)\n"
          "  --folds K         instead, K contiguous time blocks, each held out once\n"
          "  --progress        progress on stderr (reading, fitting); default when stderr\n"
          "                    is a terminal; --no-progress turns it off\n"
          "  --idle-profile F  idle power from this profile (default MODEL_DIR/idle/NODE.json\n"
          "                    when it exists); --no-idle-profile fits it instead\n"
          "  --linear          journal features only, no utilisation curve (monotone,\n"
          "                    degree-8 Bernstein tails of u = CPU time / ncpu)\n"
          "  --curve-shape S   the curve: rising (monotone, default), rising and convex\n"
          "                    unless the cells reject that (auto), or always convex\n"
          "  --ncpu N          CPU count for journal rows without an ncpu column\n"
          "  --keep-lag-unsure fit rows flagged 16 too (meter aligned before a confident\n"
          "                    lag estimate or around a change of it; skipped by default)\n"
          "  --idle            record an idle profile from a quiet window of the journal\n"
          "                    (default out MODEL_DIR/idle/NODE.json); refused when busy\n"
          "                    with --group: the shared meter while every member was\n"
          "                    quiet (MODEL_DIR/idle/group/NAME.json), then the group's\n"
          "                    idle sum instead of a fitted one (--no-idle-profile: fitted)\n"
          "  --from T, --to T  the window: unix seconds or YYYY-MM-DDTHH:MM:SSZ\n"
          "  --last D          the window: the journal's last D (600, 10m, 1h) instead\n"
          "  --auto            the window: the journal's quietest one of --length D\n"
          "                    (default 10m), all cells usable\n"
          "  --max-util F      highest mean CPU utilisation that counts as idle (default 0.05)\n"
          "Shared meter (journal flag 64: one meter for several nodes):\n"
          "  --group NAME      fit the group jointly against its meter; one model per member\n"
          "                    in MODEL_DIR/NODE.json (default DATA_DIR/models)\n"
          "  --nodes A,B,...   its members; journals JOURNAL_DIR/NODE.csv and rotations\n"
          "  --form F          per-node (each member its coefficients), pooled (shared ones)\n"
          "                    or auto (default): per-node when the members' loads tell\n"
          "                    them apart (condition <= 30, |r| <= 0.9), else pooled\n"
          "  --idle-split S    only the sum of idle powers is fitted: equal parts, weights\n"
          "                    W1,W2,... (--nodes order) or profile (MODEL_DIR/idle/NODE.json\n"
          "                    of each, scaled; default when every member has one)\n"
          "  --force           also replace a member's model that is not of this group\n"
          "Exit: 0 ok, 1 usage, 2 data error (or a worse model or a busy window refused).\n");
}

/* Unix seconds, or an ISO 8601 UTC time "YYYY-MM-DDTHH:MM:SS[Z]". */
static int cli_time(const char *s, double *out) {
  char *end;
  double v = strtod(s, &end);
  if (*s && *end == '\0' && isfinite(v)) {
    *out = v;
    return 0;
  }
  struct tm tm = {0};
  end = strptime(s, "%Y-%m-%dT%H:%M:%S", &tm);
  if (!end || (*end && strcmp(end, "Z") != 0))
    return -1;
  *out = (double)timegm(&tm);
  return 0;
}

/* "600", "600s", "10m", "1h", "1d" in seconds. */
static int cli_duration(const char *s, double *out) {
  char *end;
  double v = strtod(s, &end);
  double unit = !*end || !strcmp(end, "s") ? 1
                : !strcmp(end, "m")        ? 60
                : !strcmp(end, "h")        ? 3600
                : !strcmp(end, "d")        ? 86400
                                           : 0;
  if (end == s || !(unit > 0) || !(v > 0) || !isfinite(v))
    return -1;
  *out = v * unit;
  return 0;
}

static int cli_option(int c, const char *arg, struct cli_opts *o) {
  char why[128];
  double v;
  long k;
  switch (c) {
    case 'j':
      if (o->njournal == CLI_MAX_JOURNALS)
        return fprintf(stderr, "erg fit: too many --journal\n"), -1;
      o->journal[o->njournal++] = arg;
      return 0;
    case 'n':
      o->node = arg;
      return 0;
    case 'd':
      o->data_dir = arg;
      return 0;
    case 'D':
      o->journal_dir = arg;
      return 0;
    case 'M':
      o->model_dir = arg;
      return 0;
    case 'o':
      o->out = arg;
      return 0;
    case 'J':
      o->json = true;
      return 0;
    case 'p':
      o->progress = 1;
      return 0;
    case 'P':
      o->progress = 0;
      return 0;
    case 'f':
      o->force = true;
      return 0;
    case 'i':
      o->idle = true;
      return 0;
    case 'l':
      o->linear = true;
      return 0;
    case 'C': {
      int cs = erg_curve_shape_parse(arg);
      if (cs < 0) {
        fprintf(stderr, "erg fit: --curve-shape %s: auto, monotone or convex\n", arg);
        return -1;
      }
      o->fit.curve_shape = (enum erg_curve_shape)cs;
      return 0;
    }
    case 'I':
      o->idle_profile = arg;
      return 0;
    case 'N':
      o->no_idle_profile = true;
      return 0;
    case 'K':
      o->keep_lag_unsure = true;
      return 0;
    case 'g':
      o->group = arg;
      return 0;
    case 'G':
      o->nodes = arg;
      return 0;
    case 'x':
      o->form = arg;
      return 0;
    case 'S':
      o->idle_split = arg;
      return 0;
    case 'a':
      o->auto_window = true;
      return 0;
    case 'F':
    case 'T':
      if (cli_time(arg, c == 'F' ? &o->from : &o->to) != 0)
        return fprintf(stderr, "erg fit: bad time '%s'\n", arg), -1;
      return 0;
    case 'L':
    case 'e':
      if (cli_duration(arg, c == 'L' ? &o->last_seconds : &o->length_seconds) != 0)
        return fprintf(stderr, "erg fit: bad duration '%s' (600, 10m, 1h)\n", arg), -1;
      return 0;
    case 'u':
      if (erg_config_double(arg, 0.001, 1, &o->max_util, why, sizeof why) != 0)
        return fprintf(stderr, "erg fit: --max-util: %s\n", why), -1;
      return 0;
    case 'c':
      if (erg_config_long(arg, 1, 1 << 20, &k, why, sizeof why) != 0)
        return fprintf(stderr, "erg fit: --ncpu: %s\n", why), -1;
      o->ncpu = (double)k;
      return 0;
    case 'H':
      if (erg_config_double(arg, 0, 0.9, &v, why, sizeof why) != 0)
        return fprintf(stderr, "erg fit: --holdout: %s\n", why), -1;
      o->fit.holdout_fraction = v;
      return 0;
    case 'k':
      if (erg_config_long(arg, 2, 100, &k, why, sizeof why) != 0)
        return fprintf(stderr, "erg fit: --folds: %s\n", why), -1;
      o->fit.folds = (int)k;
      return 0;
    case 'h':
      cli_usage(stdout);
      return 1;
    default:
      cli_usage(stderr);
      return -1;
  }
}

static int cli_parse(int argc, char **argv, struct cli_opts *o) {
  static const struct option longopts[] = {{"journal", required_argument, 0, 'j'},
                                           {"node", required_argument, 0, 'n'},
                                           {"data-dir", required_argument, 0, 'd'},
                                           {"journal-dir", required_argument, 0, 'D'},
                                           {"model-dir", required_argument, 0, 'M'},
                                           {"out", required_argument, 0, 'o'},
                                           {"json", no_argument, 0, 'J'},
                                           {"holdout", required_argument, 0, 'H'},
                                           {"folds", required_argument, 0, 'k'},
                                           {"progress", no_argument, 0, 'p'},
                                           {"no-progress", no_argument, 0, 'P'},
                                           {"force", no_argument, 0, 'f'},
                                           {"idle", no_argument, 0, 'i'},
                                           {"from", required_argument, 0, 'F'},
                                           {"to", required_argument, 0, 'T'},
                                           {"last", required_argument, 0, 'L'},
                                           {"max-util", required_argument, 0, 'u'},
                                           {"ncpu", required_argument, 0, 'c'},
                                           {"linear", no_argument, 0, 'l'},
                                           {"curve-shape", required_argument, 0, 'C'},
                                           {"idle-profile", required_argument, 0, 'I'},
                                           {"no-idle-profile", no_argument, 0, 'N'},
                                           {"keep-lag-unsure", no_argument, 0, 'K'},
                                           {"group", required_argument, 0, 'g'},
                                           {"nodes", required_argument, 0, 'G'},
                                           {"form", required_argument, 0, 'x'},
                                           {"idle-split", required_argument, 0, 'S'},
                                           {"auto", no_argument, 0, 'a'},
                                           {"length", required_argument, 0, 'e'},
                                           {"help", no_argument, 0, 'h'},
                                           {0, 0, 0, 0}};
  o->from = o->to = NAN;
  o->max_util = 0.05;
  o->progress = -1;
  optind = 0; /* glibc: full reset, erg's main may have used getopt */
  for (int c; (c = getopt_long(argc, argv, "+", longopts, NULL)) != -1;) {
    int rc = cli_option(c, optarg, o);
    if (rc != 0)
      return rc;
  }
  bool window = isfinite(o->from) || isfinite(o->to) || o->last_seconds > 0 || o->auto_window ||
                o->length_seconds > 0;
  if (optind != argc) {
    cli_usage(stderr);
    return -1;
  }
  if (o->group || o->nodes || o->form || o->idle_split) {
    /* A group's idle: the meter while every member is quiet, one window. */
    bool one = (isfinite(o->from) && isfinite(o->to)) != (o->last_seconds > 0);
    if ((o->idle && (!one || o->auto_window || o->length_seconds > 0)) || (!o->idle && window)) {
      fprintf(stderr, "erg fit: --group --idle needs one window: --from and --to, or --last "
                      "(not --auto: every member must be quiet in the same window)\n");
      return -1;
    }
    return cli_group_usage_check(o) != 0 ? -1 : 0;
  }
  if (o->njournal == 0 && !o->node) {
    cli_usage(stderr);
    return -1;
  }
  int windows = (isfinite(o->from) || isfinite(o->to)) + (o->last_seconds > 0) + o->auto_window;
  if (o->idle && (isfinite(o->from) != isfinite(o->to) || windows != 1 || !o->node ||
                  (o->length_seconds > 0 && !o->auto_window))) {
    fprintf(stderr, "erg fit: --idle needs --node and one window: --from and --to, --last, or "
                    "--auto (with --length)\n");
    return -1;
  }
  if (!o->idle && window) {
    fprintf(stderr, "erg fit: --from, --to, --last, --auto and --length are for --idle\n");
    return -1;
  }
  return 0;
}

static void cli_print_table(const struct cli_opts *o, const struct erg_model *m,
                            const struct erg_dataset *ds) {
  printf("node %s: %zu cells used of %zu rows in %zu file(s), %zu malformed line(s), %zu "
         "duplicate row(s) and %zu row(s) with impossible values skipped\n",
         m->node[0] ? m->node : "?", m->train_rows, ds->nrows, ds->files, ds->malformed_lines,
         ds->duplicate_rows, ds->implausible_rows);
  /* ergd estimates the meter's lag from load changes: until the node has
   * changed its load (an idle first day) every row has flag 16, which says
   * nothing is wrong; said so, not as a problem. */
  if (ds->lag_unsure_rows)
    printf("%zu row(s) with an uncertain meter lag (flag 16) %s: ergd estimates the meter's lag "
           "from load changes, so rows from before the node's first ones have it (normal on a "
           "first, idle day; steady rows need no lag)\n",
           ds->lag_unsure_rows, o->keep_lag_unsure ? "kept (--keep-lag-unsure)" : "skipped");
  size_t shared = cli_shared_rows(ds);
  if (shared)
    printf("%zu row(s) of a shared meter (flag 64: the group's power) skipped\n", shared);
  printf("idle_watts %.3f (%s", m->idle_watts,
         m->idle_source == ERG_IDLE_FROM_RECORDED  ? "recorded idle profile"
         : m->idle_source == ERG_IDLE_FROM_PROFILE ? "idle rows"
         : m->idle_source == ERG_IDLE_FROM_GROUP_PROFILE
             ? "part of the group's recorded idle profile"
         : m->idle_source == ERG_IDLE_FROM_GROUP_FIT ? "part of the group's fitted idle"
                                                     : "fit");
  if (m->idle_source != ERG_IDLE_FROM_FIT && m->idle_rows)
    printf(", %zu cells", m->idle_rows);
  printf(")\n");
  if (m->curve_shape != ERG_CURVE_AUTO)
    printf("utilisation curve: %s\n", m->curve_shape == ERG_CURVE_CONVEX
                                          ? "rising and convex"
                                          : "rising (a convex one rejected by the cells)");
  printf("%-44s %s\n", "feature", "watts per unit");
  for (size_t k = 0; k < m->nfeatures; k++)
    printf("  %-42s %.6g\n", m->feature[k], m->coef[k]);
  for (size_t k = 0; k < m->nleft_out; k++)
    printf("  %-42s left out: not supported by the data (t = %.1f < 3)\n", m->left_out[k],
           m->left_out_t[k]);
  const struct erg_fit_metrics *x = &m->metrics;
  printf("held-out validation (%s):\n", m->validation);
  cli_print_metrics(x);
}

static void cli_print_json(const struct cli_opts *o, const struct erg_model *m,
                           const struct erg_dataset *ds) {
  json_t *j = erg_model_json(m);
  if (!j)
    return;
  json_object_set_new(j, "journal", cli_journal_json(o, ds));
  json_dumpf(j, stdout, JSON_INDENT(2) | JSON_REAL_PRECISION(17));
  putchar('\n');
  json_decref(j);
}

/* Writes the model unless the one already at --out predicts the new
 * model's held-out cells better. */
static int cli_install(const struct cli_opts *o, const struct erg_model *m,
                       const struct erg_holdout *ho) {
  struct erg_model current;
  char why[512];
  bool exists = access(o->out, F_OK) == 0;
  int loaded = exists ? erg_model_load(&current, o->out, why, sizeof why) : -1;
  /* Not a model (damaged, another file named by mistake): what is there
   * may be the only copy of something; replaced only when told. */
  if (!o->force && exists && loaded != 0) {
    fprintf(stderr,
            "erg fit: not replacing %s: it is not a valid model (%s); use --force to "
            "overwrite it\n",
            o->out, why);
    return 2;
  }
  /* A group member's model holds its part of the shared meter: a model of
   * the node's own rows (from before it joined) does not silently replace it. */
  if (!o->force && loaded == 0 && current.group.name[0]) {
    fprintf(stderr,
            "erg fit: not replacing %s: it is node %s's part of group %s (erg fit "
            "--group); use --force to overwrite it\n",
            o->out, current.node, current.group.name);
    return 2;
  }
  if (!o->force && loaded == 0) {
    if (erg_model_is_worse(&current, m, ho, 0.05, why, sizeof why)) {
      fprintf(stderr, "erg fit: not replacing %s: %s (use --force)\n", o->out, why);
      return 2;
    }
    fprintf(stderr, "erg fit: replacing %s: %s\n", o->out, why);
  }
  if (erg_model_save(m, o->out, why, sizeof why) != 0) {
    fprintf(stderr, "erg fit: %s\n", why);
    return 2;
  }
  if (!o->json)
    printf("model written to %s\n", o->out);
  return 0;
}

/* MODEL_DIR/idle/NODE.json. */
static void cli_profile_path(const struct cli_opts *o, const char *node, char *out, size_t outlen) {
  char dir[1024];
  cli_model_dir(o, dir, sizeof dir);
  if (erg_idle_profile_path(dir, node, out, outlen) != 0)
    out[0] = '\0';
}

/* `erg fit --idle`: the quiet window's power, refused when it was busy. */
static int cli_record_idle(const struct cli_opts *o, const struct erg_dataset *ds) {
  char why[512], path[1100];
  double from, to;
  cli_idle_window(o, ds, &from, &to);
  struct erg_idle_profile p;
  double length = o->length_seconds > 0 ? o->length_seconds : 600;
  if (o->auto_window
          ? erg_idle_profile_find_quiet(ds, length, o->max_util, o->ncpu, &p, why, sizeof why)
          : erg_idle_profile_from_dataset(ds, from, to, o->max_util, o->ncpu, &p, why,
                                          sizeof why)) {
    fprintf(stderr, "erg fit --idle: %s\n", why);
    /* The journal is too young or too busy for the default 10 min: say
     * what would work now, or how long to wait. */
    const char *is = NULL;
    for (const char *q = strstr(why, " is "); q; q = strstr(q + 1, " is "))
      is = q;
    double longest = o->auto_window && strstr(why, "no window of") && is ? atof(is + 4) : 0;
    if (longest >= 60)
      fprintf(stderr,
              "erg fit --idle: hint: --length %.0fs finds that stretch now (a shorter window "
              "averages fewer cells), or let the node idle longer and try again\n",
              floor(longest / 60) * 60);
    else if (o->auto_window)
      fprintf(stderr,
              "erg fit --idle: hint: let the node idle for %.0f s (journalled by ergd) "
              "and try again, or give a shorter --length\n",
              length);
    return 2;
  }
  if (o->auto_window && !o->json) {
    char a[32], b[32];
    time_t ta = (time_t)p.first_unix_seconds, tb = (time_t)p.last_unix_seconds;
    struct tm tm;
    strftime(a, sizeof a, "%Y-%m-%dT%H:%M:%SZ", gmtime_r(&ta, &tm));
    strftime(b, sizeof b, "%Y-%m-%dT%H:%M:%SZ", gmtime_r(&tb, &tm));
    printf("node %s: quietest window of %.0f s: %s to %s (%.0f to %.0f), mean CPU utilisation "
           "%.2f %%\n",
           o->node, length, a, b, p.first_unix_seconds, p.last_unix_seconds,
           100 * p.mean_utilization);
  }
  erg_strlcpy(p.node, o->node, sizeof p.node);
  if (o->out)
    erg_strlcpy(path, o->out, sizeof path);
  else
    cli_profile_path(o, o->node, path, sizeof path);
  char dir[1100];
  erg_strlcpy(dir, path, sizeof dir);
  erg_mkdir_p(dirname(dir), 0755);
  if (erg_idle_profile_save(&p, path, why, sizeof why) != 0) {
    fprintf(stderr, "erg fit --idle: %s\n", why);
    return 2;
  }
  /* The mean's standard error: a fit with this profile carries its error
   * whole into the curve at light load (docs/accuracy.md, "Light load"). */
  double se = p.cells > 1 ? p.stddev_watts / sqrt((double)p.cells) : p.stddev_watts;
  if (o->json) {
    json_t *j = erg_idle_profile_json(&p);
    json_object_set_new(j, "path", json_string(path));
    json_object_set_new(j, "standard_error_watts", json_real(se));
    json_dumpf(j, stdout, JSON_INDENT(2) | JSON_REAL_PRECISION(12));
    putchar('\n');
    json_decref(j);
  } else
    printf("node %s: idle %.2f W (stddev %.2f W) over %zu cells, mean CPU utilisation %.2f %%\n"
           "the mean is known to about +-%.2f W (stddev / sqrt(cells)), which the fitted curve "
           "carries whole at light load: record longer for less\n"
           "idle profile written to %s; the next `erg fit` of %s uses it as idle power\n",
           p.node, p.mean_watts, p.stddev_watts, p.cells, 100 * p.mean_utilization, se, path,
           p.node);
  return 0;
}

/* The idle profile for the fit: --idle-profile, else the default file if
 * it exists. Returns -1 on a file that is there but unusable. */
static int cli_find_profile(const struct cli_opts *o, const struct erg_dataset *ds,
                            struct erg_idle_profile *p, bool *have) {
  char path[1100], why[512];
  const char *node = o->node ? o->node : ds->node;
  *have = false;
  if (o->no_idle_profile || (!o->idle_profile && !node[0]))
    return 0;
  if (o->idle_profile)
    erg_strlcpy(path, o->idle_profile, sizeof path);
  else
    cli_profile_path(o, node, path, sizeof path);
  if (!o->idle_profile && (!path[0] || access(path, F_OK) != 0))
    return 0;
  if (erg_idle_profile_load(p, path, why, sizeof why) != 0) {
    fprintf(stderr, "erg fit: %s\n", why);
    return -1;
  }
  char safe[ERG_NAME_MAX];
  erg_name_sanitize(node, strlen(node), safe);
  if (p->node[0] && node[0] && strcmp(p->node, node) && strcmp(p->node, safe)) {
    fprintf(stderr, "erg fit: %s is the idle profile of node '%s', not '%s'\n", path, p->node,
            node);
    return -1;
  }
  if (!o->json)
    fprintf(stderr, "erg fit: idle power from %s: %.2f W (%zu cells)\n", path, p->mean_watts,
            p->cells);
  *have = true;
  return 0;
}

/* Fits, prints the model and installs it (--out). */
static int cli_fit(struct cli_opts *o, struct erg_dataset *ds, int *last_percent) {
  char why[512];
  struct erg_idle_profile profile;
  bool have_profile;
  if (cli_find_profile(o, ds, &profile, &have_profile) != 0)
    return 2;
  o->fit.idle_profile = have_profile ? &profile : NULL;
  o->fit.node = o->node;
  if (last_percent) {
    o->fit.progress = cli_progress;
    o->fit.progress_user = last_percent;
  }
  struct erg_model m;
  struct erg_holdout ho;
  erg_holdout_init(&ho);
  o->fit.holdout = o->out ? &ho : NULL;
  int rc = erg_fit(ds, &o->fit, &m, why, sizeof why);
  if (rc != 0)
    fprintf(stderr, "erg fit: %s\n", why);
  else if (o->json)
    cli_print_json(o, &m, ds);
  else
    cli_print_table(o, &m, ds);
  if (rc == 0 && o->out)
    rc = cli_install(o, &m, &ho);
  erg_holdout_free(&ho);
  return rc == 0 ? 0 : 2;
}

static int cli_run(struct cli_opts *o, struct erg_dataset *ds) {
  char why[512];
  /* Progress by default only where someone watches, not in cron mail. */
  bool progress = o->progress > 0 || (o->progress < 0 && isatty(STDERR_FILENO));
  int last_percent = -1, *lp = progress ? &last_percent : NULL;
  if (o->group)
    return cli_group_run(o, lp);
  if (cli_load(o, o->node, ds, lp, why, sizeof why) != 0) {
    fprintf(stderr, "erg fit: %s\n", why);
    return 2;
  }
  if (o->idle)
    return cli_record_idle(o, ds);
  if (cli_prepare(o, ds, why, sizeof why) != 0) {
    fprintf(stderr, "erg fit: %s\n", why);
    return 2;
  }
  return cli_fit(o, ds, lp);
}

int erg_fit_cli(int argc, char **argv) {
  struct cli_opts o = {0};
  erg_fit_options_init(&o.fit);
  int rc = cli_parse(argc, argv, &o);
  if (rc != 0)
    return rc > 0 ? 0 : 1;
  struct erg_dataset ds;
  erg_dataset_init(&ds);
  rc = cli_run(&o, &ds);
  erg_dataset_free(&ds);
  return rc;
}
