// SPDX-License-Identifier: GPL-3.0-or-later
/* ergd's user names (collector/usernames.c): the sanitiser agents' names
 * pass through (control bytes, invalid UTF-8, a leading '[', length cut on
 * a UTF-8 boundary), the bounded per-node map (renames, uid keys only) and
 * names.tsv written and read back, hostile lines included. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "collector_int.h"

static void clean_is(const char *in, const char *want, int changed) {
  char out[USER_NAME_MAX];
  assert_int_equal(user_name_clean(in, out), changed);
  assert_string_equal(out, want);
}

static void test_clean(void **state) {
  (void)state;
  clean_is("alice", "alice", 0);
  clean_is("j\xc3\xbcrgen", "j\xc3\xbcrgen", 0); /* UTF-8 kept */
  clean_is("<b>x\"y</b>", "<b>x\"y</b>", 0);     /* markup: escaped by readers */
  clean_is("[system]", "?system]", 1);           /* not the collector's key */
  clean_is("a[b", "a[b", 0);
  clean_is("a\tb\nc\x01\x7f", "a?b?c??", 1); /* one line, no tabs */
  clean_is("bad\xff\xfe", "bad??", 1);       /* invalid UTF-8 */
  clean_is("cut\xc3", "cut?", 1);            /* truncated sequence */
  clean_is("", "", 0);
  char longname[200];
  memset(longname, 'a', sizeof longname - 1);
  longname[sizeof longname - 1] = '\0';
  char out[USER_NAME_MAX];
  assert_int_equal(user_name_clean(longname, out), 1);
  assert_int_equal(strlen(out), USER_NAME_MAX - 1);
  /* 63 ASCII bytes and a 2-byte character: cut before it, never inside. */
  memset(longname, 'a', 63);
  strcpy(longname + 63, "\xc3\xa9");
  assert_int_equal(user_name_clean(longname, out), 1);
  assert_int_equal(strlen(out), 63);
}

static void test_map(void **state) {
  (void)state;
  struct user_names m = {0};
  assert_int_equal(user_names_set(&m, 1000, "alice"), 1);
  assert_int_equal(user_names_set(&m, 1000, "alice"), 0);
  assert_int_equal(user_names_set(&m, 7, "seven"), 1);
  assert_string_equal(user_names_get(&m, "1000"), "alice");
  assert_string_equal(user_names_get(&m, "7"), "seven");
  assert_null(user_names_get(&m, "[system]"));
  assert_null(user_names_get(&m, "1000x"));
  assert_null(user_names_get(&m, "99999999999"));
  assert_null(user_names_get(&m, "8"));
  assert_int_equal(user_names_set(&m, 1000, "alice2"), 1); /* renamed on the node */
  assert_string_equal(user_names_get(&m, "1000"), "alice2");
  for (uint32_t u = 0; m.n < USER_NAMES_MAX; u++)
    user_names_set(&m, 100000 + u, "x");
  assert_int_equal(user_names_set(&m, 5, "over"), -1);     /* bounded */
  assert_int_equal(user_names_set(&m, 1000, "alice3"), 1); /* known uids still update */
  user_names_free(&m);
}

static void test_tsv_round_trip(void **state) {
  (void)state;
  struct user_names m = {0}, r = {0};
  user_names_set(&m, 1001, "<b>ev\"il</b>");
  user_names_set(&m, 1000, "bob");
  char *tsv = user_names_tsv(&m);
  assert_non_null(tsv);
  assert_string_equal(tsv, "1000\tbob\n1001\t<b>ev\"il</b>\n");
  assert_int_equal(m.dirty, 0);
  char path[] = "/tmp/erg-names-XXXXXX";
  int fd = mkstemp(path);
  assert_true(fd >= 0);
  FILE *f = fdopen(fd, "w");
  /* Hand-edited or damaged lines: only "<uid> TAB <name>" counts, cleaned again. */
  fprintf(f, "%s[x]\tbad key\n42\t[root\x01]\nno tab\n43\t\n", tsv);
  fclose(f);
  assert_int_equal(user_names_load(&r, path), 3);
  assert_string_equal(user_names_get(&r, "1000"), "bob");
  assert_string_equal(user_names_get(&r, "1001"), "<b>ev\"il</b>");
  assert_string_equal(user_names_get(&r, "42"), "?root?]");
  assert_null(user_names_get(&r, "43"));
  assert_int_equal(r.dirty, 0);
  unlink(path);
  free(tsv);
  user_names_free(&m);
  user_names_free(&r);
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_clean), cmocka_unit_test(test_map),
                                     cmocka_unit_test(test_tsv_round_trip)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
