// SPDX-License-Identifier: GPL-3.0-or-later
/* Modbus register specs: parsing and decoding of every type and byte order
 * against hand-computed wire bytes (123.45f = 0x42F6E666). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "erg_pdu.h"

static double dec(const char *spec, uint16_t r0, uint16_t r1) {
  struct erg_modbus_reg r;
  char why[200];
  assert_int_equal(erg_modbus_reg_parse(spec, &r, why, sizeof why), 0);
  uint16_t regs[2] = {r0, r1};
  return erg_modbus_reg_decode(&r, regs);
}

static void test_float32_orders(void **st) {
  (void)st;
  assert_float_equal(dec("4:0:float32", 0x42F6, 0xE666), 123.45, 1e-4);
  assert_float_equal(dec("4:0:float32:abcd", 0x42F6, 0xE666), 123.45, 1e-4);
  assert_float_equal(dec("4:0:float32:cdab", 0xE666, 0x42F6), 123.45, 1e-4);
  assert_float_equal(dec("4:0:float32:badc", 0xF642, 0x66E6), 123.45, 1e-4);
  assert_float_equal(dec("4:0:float32:DCBA", 0x66E6, 0xF642), 123.45, 1e-4);
  /* The wrong order is not silently right. */
  assert_true(fabs(dec("4:0:float32:abcd", 0xE666, 0x42F6) - 123.45) > 1);
}

static void test_integers(void **st) {
  (void)st;
  assert_float_equal(dec("3:0:uint32", 0x0001, 0x0002), 65538, 0);
  assert_float_equal(dec("3:0:uint32:cdab", 0x0002, 0x0001), 65538, 0);
  assert_float_equal(dec("3:0:uint32", 0xFFFF, 0xFFFF), 4294967295.0, 0);
  assert_float_equal(dec("3:0:int32", 0xFFFF, 0xFFFE), -2, 0);
  assert_float_equal(dec("3:0:int32:badc", 0xFFFF, 0xFEFF), -2, 0);
  assert_float_equal(dec("3:0:uint16", 0x1234, 0), 0x1234, 0);
  assert_float_equal(dec("3:0:uint16:badc", 0x3412, 0), 0x1234, 0);
  assert_float_equal(dec("3:0:uint16:cdab", 0x1234, 0), 0x1234, 0); /* word order: n/a */
  assert_float_equal(dec("3:0:int16", 0xFFFF, 0), -1, 0);
}

static void test_parse(void **st) {
  (void)st;
  struct erg_modbus_reg r;
  char why[200];
  assert_int_equal(erg_modbus_reg_parse("3:0x0105:uint32:cdab", &r, why, sizeof why), 0);
  assert_int_equal(r.function, 3);
  assert_int_equal(r.address, 0x105);
  assert_int_equal(r.type, ERG_MODBUS_UINT32);
  assert_string_equal(r.order, "cdab");
  assert_int_equal(erg_modbus_reg_count(&r), 2);
  assert_int_equal(erg_modbus_reg_parse("4:52:int16", &r, why, sizeof why), 0);
  assert_int_equal(erg_modbus_reg_count(&r), 1);
  const char *bad[] = {"",
                       "5:1:uint16",
                       "3:70000:uint16",
                       "3:x:uint16",
                       "3:1:float64",
                       "3:1:uint16:abdc",
                       "3:1:uint16:abc",
                       "3:1",
                       "3:-1:int16"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    why[0] = '\0';
    assert_int_equal(erg_modbus_reg_parse(bad[i], &r, why, sizeof why), -1);
    assert_true(why[0] != '\0');
  }
}

/* Issue 14: a float32 kWh register's step at a real meter's reading. At
 * 48,213 kWh (between 2^15 and 2^16) floats are 2^-8 kWh apart: 3.9 Wh =
 * 14,062.5 J, ten times a 5 s cell at 300 W (1.5 kJ). Integers step by 1. */
static void test_resolution(void **st) {
  (void)st;
  struct erg_modbus_reg f, u;
  char why[200];
  assert_int_equal(erg_modbus_reg_parse("4:0x48:float32", &f, why, sizeof why), 0);
  assert_int_equal(erg_modbus_reg_parse("3:0x105:uint32:cdab", &u, why, sizeof why), 0);
  assert_float_equal(erg_modbus_reg_resolution(&f, 48213.0) * 3.6e6, 14062.5, 1e-9);
  assert_float_equal(erg_modbus_reg_resolution(&f, 1.5) * 3.6e6, 3.6e6 / 8388608.0, 1e-9);
  assert_float_equal(erg_modbus_reg_resolution(&f, -48213.0), 1.0 / 256, 0);
  assert_float_equal(erg_modbus_reg_resolution(&u, 48213.0), 1, 0);
  assert_true(isnan(erg_modbus_reg_resolution(&f, NAN)));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_float32_orders),
      cmocka_unit_test(test_integers),
      cmocka_unit_test(test_parse),
      cmocka_unit_test(test_resolution),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
