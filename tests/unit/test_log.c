// SPDX-License-Identifier: GPL-3.0-or-later
/* Log lines (common/log.c, issue 23): text from agents and devices cannot
 * forge a line or garble a terminal. Control bytes, C1 controls and bytes
 * that are no UTF-8 are written \xNN (\n, \r, \t as such), valid UTF-8 is
 * kept, and a message is cut at 1,024 bytes with "…". stderr is captured in
 * a temporary file. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "erg_common.h"

/* Runs one erg_warn("%s", msg) with stderr in a file; the line written. */
static char *log_line(const char *msg) {
  static char buf[8192];
  fflush(stderr);
  int saved = dup(2);
  FILE *tmp = tmpfile();
  assert_non_null(tmp);
  dup2(fileno(tmp), 2);
  erg_warn("%s", msg);
  fflush(stderr);
  dup2(saved, 2);
  close(saved);
  rewind(tmp);
  size_t n = fread(buf, 1, sizeof buf - 1, tmp);
  fclose(tmp);
  buf[n] = '\0';
  return buf;
}

/* The message part after "ident warning: ". */
static const char *message_of(const char *line) {
  const char *p = strstr(line, " warning: ");
  assert_non_null(p);
  return p + 10;
}

static int valid_utf8(const char *s) {
  for (size_t i = 0, n = strlen(s); i < n;) {
    size_t len = erg_utf8_len(s + i, n - i);
    if (!len)
      return 0;
    i += len;
  }
  return 1;
}

static void test_escapes(void **state) {
  (void)state;
  erg_log_init("t", ERG_LOG_INFO);
  char *l = log_line("node a\n2026-01-01T00:00:00Z ergd error: forged\r\tend");
  assert_string_equal(message_of(l), "node a\\n2026-01-01T00:00:00Z ergd error: forged\\r\\tend\n");
  assert_ptr_equal(strchr(l, '\n'), l + strlen(l) - 1); /* one line */
  l = log_line("bell\a esc\x1b[31m del\x7f c1\xc2\x9b x");
  assert_string_equal(message_of(l), "bell\\x07 esc\\x1b[31m del\\x7f c1\\xc2\\x9b x\n");
  l = log_line("bad \xff\xfe\xc3( ok caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x94\x8c");
  assert_string_equal(message_of(l),
                      "bad \\xff\\xfe\\xc3( ok caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x94\x8c\n");
  /* Overlong forms and surrogates are no UTF-8 either. */
  l = log_line("\xc0\xaf \xe0\x80\xaf \xed\xa0\x80 \xf4\x90\x80\x80");
  assert_string_equal(message_of(l), "\\xc0\\xaf \\xe0\\x80\\xaf \\xed\\xa0\\x80 "
                                     "\\xf4\\x90\\x80\\x80\n");
  assert_true(valid_utf8(l));
  /* Levels still filter. */
  erg_log_init("t", ERG_LOG_ERR);
  assert_string_equal(log_line("hidden"), "");
  erg_log_init("t", ERG_LOG_INFO);
}

static void test_bounded(void **state) {
  (void)state;
  erg_log_init("t", ERG_LOG_INFO);
  /* A 4 KB collection string of newlines and text: one line, cut. */
  char big[4097];
  for (int i = 0; i < 4096; i++)
    big[i] = i % 8 == 7 ? '\n' : 'a';
  big[4096] = '\0';
  char *l = log_line(big);
  const char *m = message_of(l);
  assert_ptr_equal(strchr(l, '\n'), l + strlen(l) - 1);
  assert_true(strlen(m) <= 1024);
  assert_string_equal(m + strlen(m) - 4, "\xe2\x80\xa6\n");
  /* Multi-byte characters are never split by the cut. */
  char wide[3000] = "";
  for (int i = 0; i < 900; i++)
    strcat(wide, "\xc3\xa9");
  l = log_line(wide);
  m = message_of(l);
  assert_true(strlen(m) <= 1024);
  assert_true(valid_utf8(l));
  assert_string_equal(m + strlen(m) - 4, "\xe2\x80\xa6\n");
  /* Exactly what fits is not cut. */
  char fit[1020];
  memset(fit, 'b', sizeof fit - 1);
  fit[sizeof fit - 1] = '\0';
  l = log_line(fit);
  assert_int_equal(strlen(message_of(l)), sizeof fit); /* text + '\n' */
  assert_null(strstr(l, "\xe2\x80\xa6"));
  /* Beyond the formatting buffer too: 20 KB of escapes. */
  char *huge = malloc(20001);
  memset(huge, '\x01', 20000);
  huge[20000] = '\0';
  l = log_line(huge);
  free(huge);
  m = message_of(l);
  assert_true(strlen(m) <= 1024);
  assert_memory_equal(m, "\\x01\\x01", 8);
  assert_string_equal(m + strlen(m) - 4, "\xe2\x80\xa6\n");
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_escapes),
                                     cmocka_unit_test(test_bounded)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
