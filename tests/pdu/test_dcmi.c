// SPDX-License-Identifier: GPL-3.0-or-later
/* DCMI Get Power Reading answers decoded (collector/pdu/dcmi.c): the
 * current power taken, the BMC's window statistics never; deactivated but
 * non-zero taken with a note; 0 W, absurd values, completion codes and
 * broken answers no reading, each with its reason. Bytes as a BMC sends
 * them (the first answer is the one ipmi-dcmi printed for the simulator:
 * 321 W current, 100/400/300 W min/max/average). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "erg_pdu.h"

/* An answer: command 0x02, cc, 0xDC, current, min, max, avg (LE16),
 * timestamp, period (LE32), state. */
static size_t answer(uint8_t *b, int cc, unsigned cur, unsigned min, unsigned max, unsigned avg,
                     uint32_t ts, uint32_t period, uint8_t state) {
  uint8_t v[20] = {0x02,
                   (uint8_t)cc,
                   0xDC,
                   (uint8_t)cur,
                   (uint8_t)(cur >> 8),
                   (uint8_t)min,
                   (uint8_t)(min >> 8),
                   (uint8_t)max,
                   (uint8_t)(max >> 8),
                   (uint8_t)avg,
                   (uint8_t)(avg >> 8),
                   (uint8_t)ts,
                   (uint8_t)(ts >> 8),
                   (uint8_t)(ts >> 16),
                   (uint8_t)(ts >> 24),
                   (uint8_t)period,
                   (uint8_t)(period >> 8),
                   (uint8_t)(period >> 16),
                   (uint8_t)(period >> 24),
                   state};
  memcpy(b, v, sizeof v);
  return sizeof v;
}

static void test_active(void **st) {
  (void)st;
  /* Recorded from ipmi-dcmi against the simulator: 321 W at 1700000000. */
  const uint8_t rs[] = {0x02, 0x00, 0xdc, 0x41, 0x01, 0x64, 0x00, 0x90, 0x01, 0x2c,
                        0x01, 0x00, 0xf1, 0x53, 0x65, 0xe8, 0x03, 0x00, 0x00, 0x40};
  struct erg_dcmi_power p;
  char why[256];
  assert_int_equal(erg_dcmi_power_decode(rs, sizeof rs, &p, why, sizeof why), 0);
  assert_int_equal(p.verdict, ERG_DCMI_OK);
  assert_string_equal(why, "");
  assert_float_equal(p.watts, 321, 0);
  assert_float_equal(p.min_watts, 100, 0);
  assert_float_equal(p.max_watts, 400, 0);
  assert_float_equal(p.avg_watts, 300, 0);
  assert_int_equal(p.bmc_time_s, 1700000000u);
  assert_int_equal(p.period_ms, 1000);
  assert_true(p.active);
  assert_int_equal(p.completion_code, 0);
}

/* The average (or max) is never what erg takes, however different. */
static void test_current_not_average(void **st) {
  (void)st;
  uint8_t b[20];
  struct erg_dcmi_power p;
  char why[256];
  size_t n = answer(b, 0, 512, 90, 900, 150, 1, 3600000u * 24 * 7 / 1000, 0x40);
  assert_int_equal(erg_dcmi_power_decode(b, n, &p, why, sizeof why), 0);
  assert_float_equal(p.watts, 512, 0);
  /* High byte counts: 0x1234 W is 4660 W. */
  n = answer(b, 0, 0x1234, 0, 0, 0, 0, 0, 0x40);
  assert_int_equal(erg_dcmi_power_decode(b, n, &p, why, sizeof why), 0);
  assert_float_equal(p.watts, 4660, 0);
  assert_int_equal(p.bmc_time_s, 0);
}

/* OpenBMC: measurement state inactive, the value real. */
static void test_inactive_nonzero(void **st) {
  (void)st;
  uint8_t b[20];
  struct erg_dcmi_power p;
  char why[256];
  size_t n = answer(b, 0, 287, 0, 0, 0, 0, 0, 0x00);
  assert_int_equal(erg_dcmi_power_decode(b, n, &p, why, sizeof why), 0);
  assert_int_equal(p.verdict, ERG_DCMI_INACTIVE_TAKEN);
  assert_float_equal(p.watts, 287, 0);
  assert_false(p.active);
  assert_non_null(strstr(why, "inactive"));
  assert_non_null(strstr(why, "287 W"));
  /* Other state bits are not the measurement bit. */
  n = answer(b, 0, 287, 0, 0, 0, 0, 0, 0xBF);
  assert_int_equal(erg_dcmi_power_decode(b, n, &p, why, sizeof why), 0);
  assert_int_equal(p.verdict, ERG_DCMI_INACTIVE_TAKEN);
}

static void test_zero(void **st) {
  (void)st;
  uint8_t b[20];
  struct erg_dcmi_power p;
  char why[256];
  for (int state = 0; state < 2; state++) {
    size_t n = answer(b, 0, 0, 0, 0, 0, 0, 0, state ? 0x40 : 0);
    assert_int_equal(erg_dcmi_power_decode(b, n, &p, why, sizeof why), -1);
    assert_int_equal(p.verdict, ERG_DCMI_ZERO);
    assert_true(isnan(p.watts));
    assert_float_equal(p.current_watts, 0, 0);
    assert_non_null(strstr(why, "0 W"));
  }
}

static void test_absurd(void **st) {
  (void)st;
  uint8_t b[20];
  struct erg_dcmi_power p;
  char why[256];
  size_t n = answer(b, 0, 20000, 0, 0, 0, 0, 0, 0x40);
  assert_int_equal(erg_dcmi_power_decode(b, n, &p, why, sizeof why), 0); /* the bound itself */
  n = answer(b, 0, 20001, 0, 0, 0, 0, 0, 0x40);
  assert_int_equal(erg_dcmi_power_decode(b, n, &p, why, sizeof why), -1);
  assert_int_equal(p.verdict, ERG_DCMI_ABSURD);
  assert_true(isnan(p.watts));
  n = answer(b, 0, 0xFFFF, 0, 0, 0, 0, 0, 0x40);
  assert_int_equal(erg_dcmi_power_decode(b, n, &p, why, sizeof why), -1);
  assert_non_null(strstr(why, "65535 W"));
}

static void test_completion_codes(void **st) {
  (void)st;
  struct erg_dcmi_power p;
  char why[256];
  /* Not supported: invalid command, sub-function unavailable, invalid field. */
  static const uint8_t unsupported[] = {0xC1, 0xD6, 0xCC, 0xCB};
  for (size_t i = 0; i < sizeof unsupported; i++) {
    uint8_t rs[] = {0x02, unsupported[i]};
    assert_int_equal(erg_dcmi_power_decode(rs, sizeof rs, &p, why, sizeof why), -1);
    assert_int_equal(p.verdict, ERG_DCMI_UNSUPPORTED);
    assert_int_equal(p.completion_code, unsupported[i]);
    assert_non_null(strstr(why, "no DCMI power reading"));
  }
  uint8_t busy[] = {0x02, 0xC0};
  assert_int_equal(erg_dcmi_power_decode(busy, sizeof busy, &p, why, sizeof why), -1);
  assert_int_equal(p.verdict, ERG_DCMI_COMPLETION);
  assert_non_null(strstr(why, "0xC0 (node busy)"));
  /* A full-length answer with a bad code: the numbers in it are not read. */
  uint8_t b[20];
  size_t n = answer(b, 0xD4, 300, 0, 0, 0, 0, 0, 0x40);
  assert_int_equal(erg_dcmi_power_decode(b, n, &p, why, sizeof why), -1);
  assert_true(isnan(p.watts) && isnan(p.current_watts));
  assert_non_null(strstr(why, "privilege"));
  assert_string_equal(erg_ipmi_completion_text(0x42), "device-specific (OEM) error");
}

static void test_malformed(void **st) {
  (void)st;
  uint8_t b[20];
  struct erg_dcmi_power p;
  char why[256];
  size_t n = answer(b, 0, 300, 0, 0, 0, 0, 0, 0x40);
  for (size_t len = 0; len < n; len++) { /* every truncation */
    assert_int_equal(erg_dcmi_power_decode(b, len, &p, why, sizeof why), -1);
    assert_int_equal(p.verdict, ERG_DCMI_MALFORMED);
    assert_true(isnan(p.watts));
    assert_true(why[0] != '\0');
  }
  assert_int_equal(erg_dcmi_power_decode(NULL, 0, &p, why, sizeof why), -1);
  b[2] = 0x00; /* PICMG, not DCMI */
  assert_int_equal(erg_dcmi_power_decode(b, n, &p, why, sizeof why), -1);
  assert_non_null(strstr(why, "0x00"));
  n = answer(b, 0, 300, 0, 0, 0, 0, 0, 0x40);
  b[0] = 0x01; /* an answer to another command */
  assert_int_equal(erg_dcmi_power_decode(b, n, &p, why, sizeof why), -1);
  /* Longer than needed (a BMC padding its answer): the 20 bytes count. */
  uint8_t longer[24] = {0};
  answer(longer, 0, 300, 0, 0, 0, 0, 0, 0x40);
  assert_int_equal(erg_dcmi_power_decode(longer, sizeof longer, &p, why, sizeof why), 0);
  assert_float_equal(p.watts, 300, 0);
}

/* The request is what DCMI says: 0x02, 0xDC, mode 1, 0, 0. */
static void test_request(void **st) {
  (void)st;
  const uint8_t want[] = {0x02, 0xDC, 0x01, 0x00, 0x00};
  assert_memory_equal(erg_dcmi_power_request, want, sizeof want);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_active),           cmocka_unit_test(test_current_not_average),
      cmocka_unit_test(test_inactive_nonzero), cmocka_unit_test(test_zero),
      cmocka_unit_test(test_absurd),           cmocka_unit_test(test_completion_codes),
      cmocka_unit_test(test_malformed),        cmocka_unit_test(test_request),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
