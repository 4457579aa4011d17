// SPDX-License-Identifier: GPL-3.0-or-later
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "erg_common.h"

static int name_is_safe(const char *s) {
  if (!s[0] || s[0] == '.' || strlen(s) >= ERG_NAME_MAX)
    return 0;
  for (const char *p = s; *p; p++)
    if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-", *p))
      return 0;
  return 1;
}

static void test_sanitize_hostile(void **state) {
  (void)state;
  const char *hostile[] = {"../../etc/passwd",
                           "<script>alert(1)</script>",
                           "a b",
                           "..",
                           ".",
                           "",
                           "caf\xc3\xa9",
                           "x\x01y\n",
                           "/",
                           "a/b"};
  char out[ERG_NAME_MAX], other[ERG_NAME_MAX];
  for (size_t i = 0; i < sizeof hostile / sizeof hostile[0]; i++) {
    erg_name_sanitize(hostile[i], strlen(hostile[i]), out);
    assert_true(name_is_safe(out));
    assert_null(strchr(out, '/'));
  }
  /* Distinct inputs that map to the same characters stay distinct. */
  erg_name_sanitize("a b", 3, out);
  erg_name_sanitize("a/b", 3, other);
  assert_string_not_equal(out, other);
  /* Clean names pass unchanged. */
  erg_name_sanitize("stress-ng", 9, out);
  assert_string_equal(out, "stress-ng");
  /* A clean name imitating another's sanitized form ("a b" ->
   * "a_b-xxxxxxxx") does not get that file: it is suffixed too. */
  erg_name_sanitize("a b", 3, out);
  erg_name_sanitize(out, strlen(out), other);
  assert_string_not_equal(out, other);
  assert_true(name_is_safe(other));
  erg_name_sanitize("job-1234abcZ", 12, out); /* not hex: unchanged */
  assert_string_equal(out, "job-1234abcZ");
  char longname[400];
  memset(longname, 'a', sizeof longname - 1);
  longname[sizeof longname - 1] = '\0';
  erg_name_sanitize(longname, strlen(longname), out);
  assert_true(name_is_safe(out));
  /* Readers accept exactly what the sanitizer can make, suffixed or not. */
  erg_name_sanitize("<b> x", 5, out);
  assert_true(erg_name_is_safe(out) && erg_name_is_safe("stress-ng"));
  assert_false(erg_name_is_safe("") || erg_name_is_safe(".") || erg_name_is_safe("..") ||
               erg_name_is_safe(".hidden") || erg_name_is_safe("a/b") || erg_name_is_safe("a b") ||
               erg_name_is_safe(longname));
}

static void test_html_escape(void **state) {
  (void)state;
  char *e = erg_html_escape("<script>\"x\" & 'y'\x01</script>");
  assert_string_equal(e, "&lt;script&gt;&quot;x&quot; &amp; &#39;y&#39;?&lt;/script&gt;");
  free(e);
}

static void test_json_escape(void **state) {
  (void)state;
  char *e = erg_json_escape("a\"b\\c\n\xff", 8);
  assert_string_equal(e, "a\\\"b\\\\c\\u000a\\u00ff");
  free(e);
}

/* The name index (common/index.c) as its users drive it: append, grow by
 * rebuilding at twice the entries, find every name at its position; an
 * absent name gets a free slot; names that collide in the hash's low bits
 * probe on. */
static const char *test_name_of(const void *names, size_t i) {
  return ((const char(*)[16])names)[i];
}

static void test_name_index(void **state) {
  (void)state;
  enum { N = 5000 };
  char(*names)[16] = calloc(N, sizeof *names);
  struct erg_name_index x = {0};
  size_t n = 0, cap = 0;
  assert_non_null(names);
  assert_null(erg_name_index_slot(&x, "a", test_name_of, names));
  for (size_t i = 0; i < N; i++) {
    snprintf(names[i], sizeof names[i], "node%zu", i);
    uint32_t *slot = erg_name_index_slot(&x, names[i], test_name_of, names);
    assert_true(slot == NULL || *slot == 0); /* new */
    if (n == cap) {
      cap = cap ? 2 * cap : 4;
      assert_int_equal(erg_name_index_rebuild(&x, 2 * cap, test_name_of, names, n), 0);
      assert_int_equal(x.len, 2 * cap);
    }
    n++;
    *erg_name_index_slot(&x, names[i], test_name_of, names) = (uint32_t)n;
  }
  for (size_t i = 0; i < N; i++) {
    uint32_t *slot = erg_name_index_slot(&x, names[i], test_name_of, names);
    assert_non_null(slot);
    assert_int_equal(*slot, i + 1);
  }
  uint32_t *none = erg_name_index_slot(&x, "node5000", test_name_of, names);
  assert_non_null(none);
  assert_int_equal(*none, 0);
  erg_name_index_free(&x);
  assert_null(x.slot);
  assert_int_equal(x.len, 0);
  erg_name_index_free(NULL);
  free(names);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_sanitize_hostile), cmocka_unit_test(test_html_escape),
      cmocka_unit_test(test_json_escape), cmocka_unit_test(test_name_index)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
