/* The store against the real rrdtool: values written are the values
 * fetched, out-of-order updates fail cleanly, hostile keys stay inside the
 * root and keep their original text in index.tsv. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "erg_common.h"
#include "erg_store.h"

#define T0 1700000000LL

static char root[64];

static int setup(void **state) {
  (void)state;
  if (system("command -v rrdtool >/dev/null") != 0) {
    fprintf(stderr, "SKIP: rrdtool not installed\n");
    exit(77);
  }
  strcpy(root, "/tmp/erg-store-XXXXXX");
  assert_non_null(mkdtemp(root));
  return 0;
}

static int teardown(void **state) {
  (void)state;
  char cmd[128];
  snprintf(cmd, sizeof cmd, "rm -rf %s", root);
  return system(cmd);
}

/* rrdtool fetch value of `ds` at time t (AVERAGE, step resolution). */
static double fetch(const char *path, const char *ds, int64_t t) {
  char cmd[1600], line[512];
  snprintf(cmd, sizeof cmd, "rrdtool fetch '%s' AVERAGE -r 5 -s %lld -e %lld", path,
           (long long)(t - 5), (long long)t);
  FILE *p = popen(cmd, "r");
  assert_non_null(p);
  char names[16][32];
  int nn = 0, col = -1;
  double v = NAN;
  if (fgets(line, sizeof line, p))
    for (char *tok = strtok(line, " \n"); tok && nn < 16; tok = strtok(NULL, " \n"))
      erg_strlcpy(names[nn++], tok, sizeof names[0]);
  for (int i = 0; i < nn; i++)
    if (!strcmp(names[i], ds))
      col = i;
  while (fgets(line, sizeof line, p)) {
    char *colon = strchr(line, ':');
    if (!colon || strtoll(line, NULL, 10) != t)
      continue;
    char *s = colon + 1;
    for (int i = 0; i <= col; i++)
      v = strtod(s, &s);
  }
  pclose(p);
  return v;
}

static void test_node_roundtrip(void **state) {
  (void)state;
  struct erg_store *s;
  char why[256], path[1200];
  struct erg_store_options o = {.root = root, .step_seconds = 5};
  assert_int_equal(erg_store_open(&s, &o, why, sizeof why), 0);
  for (int i = 1; i <= 4; i++) {
    struct erg_store_node_cell c = {.t_end = T0 + 5 * i, .measured_watts = 100 + i,
                                    .modelled_watts = NAN, .idle_watts = 40,
                                    .dynamic_watts = 60 + i, .unattributed_watts = 0};
    assert_int_equal(erg_store_node_update(s, "n1", &c, why, sizeof why), 0);
  }
  erg_store_node_path(s, "n1", path, sizeof path);
  assert_float_equal(fetch(path, "measured", T0 + 15), 103, 1e-6);
  assert_float_equal(fetch(path, "idle", T0 + 15), 40, 1e-6);
  assert_float_equal(fetch(path, "dynamic", T0 + 20), 64, 1e-6);
  assert_true(isnan(fetch(path, "modelled", T0 + 15)));
  /* An update older than the last is refused and changes nothing. */
  struct erg_store_node_cell old = {.t_end = T0 + 10, .measured_watts = 999};
  assert_int_equal(erg_store_node_update(s, "n1", &old, why, sizeof why), -1);
  assert_non_null(strstr(why, "rrd update"));
  assert_float_equal(fetch(path, "measured", T0 + 10), 102, 1e-6);
  erg_store_close(s);
}

static void test_hostile_keys(void **state) {
  (void)state;
  struct erg_store *s;
  char why[256], path[1200];
  struct erg_store_options o = {.root = root, .step_seconds = 5};
  assert_int_equal(erg_store_open(&s, &o, why, sizeof why), 0);
  const char *keys[] = {"../../etc/passwd", "<script>alert(1)</script>", "a b",
                        "caf\xc3\xa9", "x\x01\ty\nz", "..", ""};
  size_t rootlen = strlen(root);
  for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
    assert_int_equal(erg_store_key_update(s, "../node", "command", keys[i], T0 + 5, 10.0 + i,
                                          why, sizeof why), 0);
    assert_int_equal(erg_store_key_path(s, "../node", "command", keys[i], path, sizeof path), 0);
    char *real = realpath(path, NULL);
    assert_non_null(real);
    assert_memory_equal(real, root, rootlen);
    free(real);
    assert_float_equal(fetch(path, "watts", T0 + 5), 10.0 + i, 1e-6);
  }
  /* Index keeps one line per key, original text with control bytes made safe. */
  char cmd[1400];
  snprintf(cmd, sizeof cmd, "cat %s/nodes/*/command/index.tsv | wc -l", root);
  FILE *p = popen(cmd, "r");
  int lines = 0;
  assert_int_equal(fscanf(p, "%d", &lines), 1);
  pclose(p);
  assert_int_equal(lines, (int)(sizeof keys / sizeof keys[0]));
  snprintf(cmd, sizeof cmd, "grep -c '<script>alert(1)</script>$' %s/nodes/*/command/index.tsv",
           root);
  assert_int_equal(system(cmd), 0);
  /* Nothing escaped the root. */
  assert_int_equal(access("/tmp/node", F_OK), -1);
  erg_store_close(s);
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_node_roundtrip),
                                     cmocka_unit_test(test_hostile_keys)};
  return cmocka_run_group_tests(tests, setup, teardown);
}
