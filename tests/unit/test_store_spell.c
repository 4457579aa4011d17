// SPDX-License-Identifier: GPL-3.0-or-later
/* Store errors are said once per spell, with the reason, and the end of a
 * spell is said too (collector/writer.c, issue 23): before, the first
 * error of the run was logged and nothing after, not the recovery, not a
 * later failure. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "state.h"

static void test_spell(void **state) {
  (void)state;
  struct store_spell sp = {0};
  assert_int_equal(store_spell_note(&sp, NULL, 100), 0); /* fine: nothing */
  assert_int_equal(store_spell_note(&sp, "rrd create x: No space left on device", 100), 1);
  assert_int_equal(store_spell_note(&sp, "rrd create y: No space left on device", 101), 0);
  /* Updates of existing archives go on while creations fail: no recovery
   * until no write failed for STORE_RECOVERED_SECONDS. */
  assert_int_equal(store_spell_note(&sp, NULL, 102), 0);
  assert_int_equal(store_spell_note(&sp, "rrd create z: No space left on device", 130), 0);
  assert_int_equal(store_spell_note(&sp, NULL, 130 + STORE_RECOVERED_SECONDS - 1), 0);
  assert_int_equal(sp.spell_errors, 3);
  assert_int_equal(store_spell_note(&sp, NULL, 130 + STORE_RECOVERED_SECONDS), 2);
  assert_int_equal(store_spell_note(&sp, NULL, 500), 0);
  /* A later failure is a new spell, said again. */
  assert_int_equal(store_spell_note(&sp, "journal j: No space left on device", 600), 1);
  assert_int_equal(sp.spell_errors, 1);
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_spell)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
