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
  const char *bad[] = {"", "5:1:uint16", "3:70000:uint16", "3:x:uint16", "3:1:float64",
                       "3:1:uint16:abdc", "3:1:uint16:abc", "3:1", "3:-1:int16"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    why[0] = '\0';
    assert_int_equal(erg_modbus_reg_parse(bad[i], &r, why, sizeof why), -1);
    assert_true(why[0] != '\0');
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_float32_orders),
      cmocka_unit_test(test_integers),
      cmocka_unit_test(test_parse),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
