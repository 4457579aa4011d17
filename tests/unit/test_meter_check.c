// SPDX-License-Identifier: GPL-3.0-or-later
/* A meter value outside the channel's physical range is no reading
 * (collector/meter_check.c, issue 23): dropped, counted per channel,
 * logged once; in-range values pass untouched. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "state.h"

static struct erg_pdu_source_config src[3];
static struct erg_collector_config cfg;
static struct source_state ss[3];
static struct collector col;

static int setup(void **state) {
  (void)state;
  memset(src, 0, sizeof src);
  memset(ss, 0, sizeof ss);
  /* a Modbus meter (units 1, 2), a PDU's outlet 3 and inlet 1, and a meter
   * with a configured max_watts */
  strcpy(src[0].name, "m");
  strcpy(src[0].driver, "modbus");
  src[0].nchannels = 2;
  src[0].channels[0] = 1;
  src[0].channels[1] = 2;
  strcpy(src[1].name, "p");
  strcpy(src[1].driver, "snmp");
  src[1].nchannels = 2;
  src[1].channels[0] = 3;
  src[1].channels[1] = 1;
  src[1].levels[1] = ERG_PDU_INLET;
  strcpy(src[2].name, "tight");
  strcpy(src[2].driver, "modbus");
  src[2].nchannels = 1;
  src[2].channels[0] = 1;
  src[2].max_watts = 3680;
  erg_collector_config_defaults(&cfg);
  cfg.sources = src;
  cfg.nsources = 3;
  col = (struct collector){.cfg = &cfg, .sources = ss};
  return 0;
}

static struct meter_msg msg(int source, int n, const double *watts, const double *joules) {
  struct meter_msg m;
  memset(&m, 0, sizeof m);
  m.source = source;
  m.nchannels = n;
  for (int i = 0; i < n; i++)
    m.readings[i] = (struct erg_pdu_reading){.t_ns = 1000000000ULL,
                                             .watts = watts[i],
                                             .energy_joules = joules ? joules[i] : NAN,
                                             .ok = true};
  return m;
}

static void test_defaults(void **state) {
  (void)state;
  assert_float_equal(meter_max_watts(&src[0], 0), 100e3, 0); /* a meter on a supply */
  assert_float_equal(meter_max_watts(&src[1], 0), 20e3, 0);  /* a PDU outlet */
  assert_float_equal(meter_max_watts(&src[1], 1), 100e3, 0); /* its inlet */
  assert_float_equal(meter_max_watts(&src[2], 0), 3680, 0);  /* configured */
}

static void test_in_range_untouched(void **state) {
  (void)state;
  double w[2] = {0, 99e3}, e[2] = {0, 3.6e12};
  struct meter_msg m = msg(0, 2, w, e), checked;
  assert_ptr_equal(meter_check(&col, &m, &checked), &m);
  assert_int_equal(ss[0].out_of_range[0] + ss[0].out_of_range[1], 0);
  /* NaN is "no value", the driver's business (bad_value), not a range. */
  double n[1] = {NAN};
  m = msg(0, 1, n, NULL);
  assert_ptr_equal(meter_check(&col, &m, &checked), &m);
  assert_int_equal(ss[0].out_of_range[0], 0);
}

static void test_out_of_range(void **state) {
  (void)state;
  /* -500 W and 4,294,967,295 W (a Gauge32's all-ones) */
  double w[2] = {-500, 4294967295.0};
  struct meter_msg m = msg(0, 2, w, NULL), checked;
  const struct meter_msg *r = meter_check(&col, &m, &checked);
  assert_ptr_equal(r, &checked);
  assert_true(isnan(r->readings[0].watts) && !r->readings[0].ok);
  assert_true(isnan(r->readings[1].watts) && !r->readings[1].ok);
  assert_float_equal(m.readings[0].watts, -500, 0); /* the input is left alone */
  assert_int_equal(ss[0].out_of_range[0], 1);
  assert_int_equal(ss[0].out_of_range[1], 1);
  assert_true(ss[0].range_logged[0] && ss[0].range_logged[1]);
  r = meter_check(&col, &m, &checked);
  assert_int_equal(ss[0].out_of_range[0], 2); /* counted every time, logged once */
  /* Watts out of range, counter fine: the counter still reads. */
  double w2[1] = {-238190}, e2[1] = {5e6};
  m = msg(1, 1, w2, e2);
  r = meter_check(&col, &m, &checked);
  assert_true(isnan(r->readings[0].watts) && r->readings[0].ok);
  assert_float_equal(r->readings[0].energy_joules, 5e6, 0);
  /* A PDU outlet at 25 kW is beyond it; its inlet at 25 kW is not. */
  double w3[2] = {25e3, 25e3};
  m = msg(1, 2, w3, NULL);
  r = meter_check(&col, &m, &checked);
  assert_true(isnan(r->readings[0].watts));
  assert_float_equal(r->readings[1].watts, 25e3, 0);
  /* A configured max_watts; a negative or infinite counter. */
  double w4[1] = {3700}, e4[1] = {-1};
  m = msg(2, 1, w4, e4);
  r = meter_check(&col, &m, &checked);
  assert_true(isnan(r->readings[0].watts) && isnan(r->readings[0].energy_joules));
  assert_false(r->readings[0].ok);
  assert_int_equal(ss[2].out_of_range[0], 2);
  double e5[1] = {INFINITY};
  m = msg(0, 1, (double[]){100}, e5);
  r = meter_check(&col, &m, &checked);
  assert_true(isnan(r->readings[0].energy_joules) && r->readings[0].ok);
}

/* The counter's move over an interval is power too. */
static void test_interval(void **state) {
  (void)state;
  uint64_t s = 1000000000ULL;
  assert_true(meter_check_interval(&col, 2, 0, 10 * s, 12 * s, 2 * 3680.0));
  assert_false(meter_check_interval(&col, 2, 0, 10 * s, 12 * s, 2 * 3681.0));
  assert_false(meter_check_interval(&col, 2, 0, 10 * s, 12 * s, NAN));
  assert_int_equal(ss[2].out_of_range[0], 2);
  assert_true(meter_check_interval(&col, 0, 0, 10 * s, 20 * s, 10 * 99e3));
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test_setup(test_defaults, setup),
                                     cmocka_unit_test_setup(test_in_range_untouched, setup),
                                     cmocka_unit_test_setup(test_out_of_range, setup),
                                     cmocka_unit_test_setup(test_interval, setup)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
