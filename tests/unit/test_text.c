// SPDX-License-Identifier: GPL-3.0-or-later
/* Output text helpers (common/names.c, issue 23): every page, report and
 * /metrics label is valid UTF-8 whatever bytes a process name holds, and a
 * CSV cell never runs as a spreadsheet formula. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "erg_common.h"

static int valid_utf8(const char *s) {
  for (size_t i = 0, n = strlen(s); i < n;) {
    size_t len = erg_utf8_len(s + i, n - i);
    if (!len)
      return 0;
    i += len;
  }
  return 1;
}

static void test_utf8_len(void **state) {
  (void)state;
  static const struct {
    const char *s;
    size_t len;
  } cases[] = {{"a", 1},
               {"\xc3\xa9", 2},
               {"\xe2\x82\xac", 3},
               {"\xf0\x9f\x94\x8c", 4},
               {"\xff", 0},
               {"\xfe", 0},
               {"\xc3(", 0},
               {"\x80", 0},
               {"\xc0\xaf", 0}, /* overlong */
               {"\xc1\xbf", 0},
               {"\xe0\x80\xaf", 0},
               {"\xed\xa0\x80", 0}, /* surrogate */
               {"\xf4\x90\x80\x80", 0},
               {"\xf5\x80\x80\x80", 0},
               {"\xe2\x82", 0},
               {"\xef\xbf\xbd", 3},
               {"\xf4\x8f\xbf\xbf", 4}};
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
    assert_int_equal(erg_utf8_len(cases[i].s, strlen(cases[i].s)), cases[i].len);
  /* Never beyond n. */
  assert_int_equal(erg_utf8_len("\xc3\xa9", 1), 0);
  assert_int_equal(erg_utf8_len("", 0), 0);
}

static void test_utf8_fix(void **state) {
  (void)state;
  char s[] = "bad\xff\xfe\xc3( caf\xc3\xa9\tx";
  assert_int_equal(erg_utf8_fix(s, 0), 3);
  assert_string_equal(s, "bad??"
                         "?( caf\xc3\xa9\tx");
  char t[] = "a\tb\x7f\xc3";
  assert_int_equal(erg_utf8_fix(t, 1), 3);
  assert_string_equal(t, "a?b??");
}

static char *csv(const char *s) {
  static char buf[512];
  FILE *f = fmemopen(buf, sizeof buf, "w");
  assert_non_null(f);
  erg_csv_text(f, s);
  fclose(f);
  return buf;
}

static void test_csv(void **state) {
  (void)state;
  assert_string_equal(csv("=1+1"), "\"'=1+1\"");
  assert_string_equal(csv("+1"), "\"'+1\"");
  assert_string_equal(csv("-bash"), "\"'-bash\"");
  assert_string_equal(csv("@SUM(A1)"), "\"'@SUM(A1)\"");
  assert_string_equal(csv("=HYPERLINK(\"http://x\")"), "\"'=HYPERLINK(\"\"http://x\"\")\"");
  assert_string_equal(csv("a=1"), "\"a=1\"");
  assert_string_equal(csv(""), "\"\"");
  assert_string_equal(csv("x,\"y\""), "\"x,\"\"y\"\"\"");
  /* A tab or CR that some spreadsheets also take as a formula start: '?'. */
  assert_string_equal(csv("\t=1"), "\"?=1\"");
  assert_string_equal(csv("a\r\nb"), "\"a??b\"");
  assert_string_equal(csv("bad\xff\xfe\xc3( caf\xc3\xa9"), "\"bad??"
                                                           "?( caf\xc3\xa9\"");
  assert_true(valid_utf8(csv("\xff\xfe\xc3(\xe2\x82")));
}

static void test_html(void **state) {
  (void)state;
  char *e = erg_html_escape("<b>\xff\xfe\xc3(caf\xc3\xa9\x01");
  assert_string_equal(e, "&lt;b&gt;??"
                         "?(caf\xc3\xa9?");
  free(e);
  e = erg_html_escape("cut \xe2\x82");
  assert_string_equal(e, "cut ??");
  assert_true(valid_utf8(e));
  free(e);
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_utf8_len),
                                     cmocka_unit_test(test_utf8_fix), cmocka_unit_test(test_csv),
                                     cmocka_unit_test(test_html)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
