// SPDX-License-Identifier: GPL-3.0-or-later
/* erg PDU and meter sources: one driver per file behind a small vtable.
 * A source is one PDU or meter with one or more channels (outlets, or the
 * meter's total). Drivers return readings; they never print. */
#ifndef ERG_PDU_H
#define ERG_PDU_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define ERG_PDU_MAX_CHANNELS 64
/* A channel's unit: the index arcs before its entity number that the
 * device decides (a daisy-chain member, databus id, cord), dotted: "210",
 * "1.2"; at most two arcs, each 0..65535. */
#define ERG_PDU_UNIT_MAX 16

/* Metering levels a PDU may offer; a channel reads one entity of one
 * level. Outlet is 0 so that a zeroed channel is an outlet, as "pdu-a:7". */
enum erg_pdu_level {
  ERG_PDU_OUTLET = 0,
  ERG_PDU_DEVICE, /* the whole PDU */
  ERG_PDU_INLET,  /* inlet, input cord, infeed */
  ERG_PDU_PHASE,  /* phase, line */
  ERG_PDU_BANK,   /* bank, branch, breaker, circuit */
  ERG_PDU_SENSOR, /* an ENTITY-SENSOR-MIB watts sensor */
  ERG_PDU_NLEVELS
};
/* Where a reading's watts came from. */
enum erg_pdu_power_source {
  ERG_PDU_W_MEASURED = 0, /* the device's active power */
  ERG_PDU_W_VA_PF,        /* apparent power x the device's power factor */
  ERG_PDU_W_ESTIMATED,    /* A x V (or VA) x the configured power factor */
};

struct erg_pdu_reading {
  uint64_t t_ns;                   /* CLOCK_REALTIME at which the value was read */
  double watts;                    /* instantaneous power, NAN when the channel has none */
  double energy_joules;            /* cumulative counter converted to J, NAN when none */
  double energy_resolution_joules; /* one counter step in J; 0: fine or unknown */
  bool ok;                         /* false: this channel failed this round */
  unsigned char power_source;      /* enum erg_pdu_power_source */
  /* The device answered something that is no reading (wrong type,
   * negative): the value reads as missing, and the collector says so once
   * (erg_pdu_source_bad_value tells what it was). */
  bool bad_value;
  /* The device's own time of the reading, where it gives one (a BMC's
   * DCMI timestamp: its clock, s since 1970), 0 none. t_ns stays the
   * arrival time: a BMC's clock may be far off ours. (Fits the struct's
   * padding: the WAL's record size is unchanged.) */
  uint32_t device_time_s;
};

/* Everything a [meter.NAME] / [pdu.NAME] config section can say. */
struct erg_pdu_source_config {
  char name[64];
  char driver[16]; /* "modbus", "snmp" */
  char host[128];
  int port;         /* 0: driver default (502, 161) */
  char profile[32]; /* e.g. "sdm630", "apc-rpdu2"; "" = auto/generic */
  int unit_id;      /* Modbus slave id */
  double timeout_seconds;
  int retries;
  int nchannels;                              /* channels the collector needs */
  int channels[ERG_PDU_MAX_CHANNELS];         /* entity numbers (1-based); meters: 1 = total */
  unsigned char levels[ERG_PDU_MAX_CHANNELS]; /* enum erg_pdu_level of each channel */
  /* SNMP: the unit of each channel ("" the level's first: the device's
   * first row), as "LEVEL:UNIT.N" names it (docs/config.md). */
  char units[ERG_PDU_MAX_CHANNELS][ERG_PDU_UNIT_MAX];
  /* SNMP: the power factor applied where a level gives only A x V or VA
   * without a power factor (0: 1.0); such readings are marked estimated. */
  double power_factor;
  /* SNMP (issue 4) */
  char community[64];
  int snmp_version; /* 1, 2 (=2c), 3 */
  char v3_user[64], v3_auth_proto[8], v3_auth_pass[128], v3_priv_proto[8], v3_priv_pass[128];
  char v3_level[16];
  /* SNMP profile "generic" (issue 4): OID templates, "%d" = outlet number;
   * oid_count and oid_total_power are scalars (no "%d"). */
  char oid_power[128], oid_energy[128], oid_name[128], oid_count[128], oid_total_power[128];
  double power_scale;         /* raw -> W, 0 = 1 */
  double energy_scale_joules; /* raw -> J, 0 = 3600 (Wh) */
  char v3_context[64];        /* SNMPv3 context name, usually empty */
  /* Modbus RTU: a serial device instead of host (issue 4). */
  char device[128];
  int baud;                 /* 0: 9600 */
  char parity;              /* 'N', 'E', 'O'; 0: 'N' */
  int data_bits, stop_bits; /* 0: 8 and 1 */
  /* Modbus profile "generic": "FC:ADDRESS:TYPE[:ORDER]" (docs/pdu.md);
   * power_scale and energy_scale_joules apply. */
  char power_register[48], energy_register[48];
  /* Readings above it (or negative) are no reading (collector/meter_check.c);
   * 0: the default for the channel's level. */
  double max_watts;
  /* The meter shows the trailing mean of its power over this many seconds
   * (a BMC's averaged power sensor; 0: an instantaneous value). ergd
   * aligns and times its readings accordingly (collector/lag.c). */
  double average_seconds;
  /* BMCs (docs/bmc.md): user, and a password file only ergd may read. */
  char user[64];
  char password_file[256];
  /* IPMI (driver ipmi): out of band over IPMI 2.0 lanplus to host[:port]
   * (623), cipher_suite (0: 3) and privilege ("user", "operator", "admin";
   * "": user); in band when host is "local" (any local interface) or device
   * names one (/dev/ipmi0). */
  int cipher_suite; /* 0: unset (3); suite 0 (no authentication) is refused */
  char privilege[16];
  /* Redfish (issue 33, docs/bmc.md): host is https://HOST[:PORT] (http://
   * allowed); the chassis' @odata.id ("" discover the one node); TLS: a CA
   * file, or a pinned public key ("sha256//BASE64", curl's
   * CURLOPT_PINNEDPUBLICKEY), or no checks at all (tls_insecure, logged);
   * auth session (default with a user), basic or none. */
  char chassis[256];
  char ca_file[256];
  char pinned_public_key[128];
  bool tls_insecure;
  char auth[16];
};

struct erg_pdu_source;

struct erg_pdu_driver {
  const char *name;
  int (*open)(struct erg_pdu_source *src, char *why, size_t whylen);
  /* Reads every configured channel once; out has cfg.nchannels entries.
   * Returns 0 if at least one channel was read, -1 with a reason if none. */
  int (*poll)(struct erg_pdu_source *src, struct erg_pdu_reading *out, char *why, size_t whylen);
  void (*close)(struct erg_pdu_source *src);
  /* Optional: modulus of channel i's energy counter in J (0 = never wraps). */
  double (*wrap_joules)(const struct erg_pdu_source *src, int channel);
  /* Optional: what channel i's last bad value was; -1 if none. */
  int (*bad_value)(const struct erg_pdu_source *src, int channel, char *why, size_t whylen);
  /* Optional: something about the readings to say once, taken as they
   * are (a BMC that marks its reading inactive yet gives one); 0 with the
   * text once, -1 when there is nothing new. */
  int (*note)(struct erg_pdu_source *src, char *why, size_t whylen);
  /* Optional: refuses a config the driver cannot use (read at config load,
   * before any device is asked); 0 or -1 with a reason. */
  int (*check)(const struct erg_pdu_source_config *c, char *why, size_t whylen);
};

struct erg_pdu_source {
  struct erg_pdu_source_config cfg;
  const struct erg_pdu_driver *driver;
  void *priv; /* driver state */
};

/* Checks a source's config before it is used, without I/O: a known
 * driver, and what that driver needs (host or device, a profile it has,
 * SNMPv3 settings it can use). 0, or -1 with a reason and, in *key, the
 * config key it concerns ("" when the section as a whole lacks something).
 * The loader (collector/config.c) turns the key into FILE:LINE. */
int erg_pdu_source_check(const struct erg_pdu_source_config *cfg, const char **key, char *why,
                         size_t whylen);
/* The drivers this build has, "modbus, snmp", for messages. */
const char *erg_pdu_driver_names(void);

/* Looks the driver up by cfg->driver and opens it. */
int erg_pdu_source_open(struct erg_pdu_source *src, const struct erg_pdu_source_config *cfg,
                        char *why, size_t whylen);
int erg_pdu_source_poll(struct erg_pdu_source *src, struct erg_pdu_reading *out, char *why,
                        size_t whylen);
void erg_pdu_source_close(struct erg_pdu_source *src);

/* Energy counter bookkeeping: turns successive cumulative readings into
 * interval energy, handling 32-bit wraps and resets (PDU reboot). A counter
 * step only moves energy between neighbouring intervals, so what it blurs
 * is the energy of one horizon (the grid step): where one step exceeds
 * ERG_PDU_COUNTER_MAX_STEP of that (by the watts), the watts are used. */
#define ERG_PDU_COUNTER_MAX_STEP 0.05
struct erg_pdu_counter {
  bool have_prev;
  double prev_joules;
  uint64_t prev_t_ns;
  double prev_watts;
  double wrap_joules;     /* counter modulus in J, 0 = never wraps */
  double horizon_seconds; /* see above; 0: the interval itself */
  /* The resolution seen (issue 14): a counter that stood still over an
   * interval in which the watts drew energy, and whose moves are whole
   * multiples of its smallest one, steps by that (a counter refreshed
   * slower than it is polled also stands still, but moves by whatever the
   * load drew). The reading's own resolution (float32 spacing at its
   * value, integer unit) is the other bound; the larger counts. */
  bool stood_still;
  double min_step_joules;    /* smallest positive move seen; 0 none yet */
  unsigned whole_moves;      /* moves since min_step_joules changed, all whole multiples */
  bool uneven_move;          /* a move since then was not a whole multiple */
  double resolution_joules;  /* of the last update; 0 unknown */
  bool coarse;               /* the last interval's energy came from the watts for it */
  uint64_t coarse_intervals; /* intervals the watts replaced the counter for */
  /* Holding (no watts to go by): a counter that has not moved since the
   * reading at prev_t_ns keeps that reading as the previous one, so its
   * next move's energy spreads over the whole time since, not into the one
   * poll interval it shows in. Up to hold_max_ns (0: never hold; the
   * caller sets it), then the standing interval counts as 0 J. */
  uint64_t hold_max_ns;
  bool held;                /* readings since prev_t_ns were held */
  uint64_t last_t_ns;       /* the last reading's time, held or not */
  uint64_t held_polls;      /* readings held, in all */
  double last_held_seconds; /* span of the last move that ended a hold */
};
enum erg_pdu_delta_kind {
  ERG_PDU_DELTA_NONE = 0, /* first reading, or a gap: nothing to attribute */
  ERG_PDU_DELTA_ENERGY,   /* from the counter difference */
  ERG_PDU_DELTA_POWER,    /* from instantaneous watts (trapezoid) */
  ERG_PDU_DELTA_RESET,    /* counter went backwards: interval skipped */
  ERG_PDU_DELTA_HELD,     /* counter stood still, no watts: energy comes with its move */
};
/* On success, t0_ns..t1_ns bound the interval and joules is its energy. */
enum erg_pdu_delta_kind erg_pdu_counter_update(struct erg_pdu_counter *c,
                                               const struct erg_pdu_reading *r, uint64_t max_gap_ns,
                                               uint64_t *t0_ns, uint64_t *t1_ns, double *joules);

/* A Modbus register spec "FC:ADDRESS:TYPE[:ORDER]": function 3 (holding)
 * or 4 (input), address 0..65535 (decimal or 0x hex), type int16, uint16,
 * int32, uint32 or float32, byte order of the value on the wire: abcd
 * (default: high word first, big-endian bytes), cdab (words swapped), badc
 * (bytes swapped in each register), dcba. */
struct erg_modbus_reg {
  int function; /* 0: none */
  int address;
  int type;      /* ERG_MODBUS_INT16 ... */
  char order[5]; /* "abcd" ... */
};
enum {
  ERG_MODBUS_INT16 = 1,
  ERG_MODBUS_UINT16,
  ERG_MODBUS_INT32,
  ERG_MODBUS_UINT32,
  ERG_MODBUS_FLOAT32
};
int erg_modbus_reg_parse(const char *spec, struct erg_modbus_reg *r, char *why, size_t whylen);
/* One step of the value near raw, in raw units: 1 for an integer type, the
 * float32 spacing (ulp) at raw for float32, which grows with the value:
 * 2^-8 kWh (3.9 Wh, 14 kJ) at 48,213 kWh. NAN when raw is not finite. */
double erg_modbus_reg_resolution(const struct erg_modbus_reg *r, double raw);
/* Registers the value spans (1 or 2). */
int erg_modbus_reg_count(const struct erg_modbus_reg *r);
/* The raw value of regs (erg_modbus_reg_count of them) in r's type/order. */
double erg_modbus_reg_decode(const struct erg_modbus_reg *r, const uint16_t *regs);

/* Modbus float32 in "ABCD" order (high word first, big-endian bytes, as
 * Eastron and most meters send it; the simulator writes it). libmodbus
 * 3.1.6's own abcd helpers swap bytes inside each register. */
void erg_pdu_float_to_regs(float f, uint16_t regs[2]);

/* What channel's last bad value was ("energy: the device sent text 'n/a'
 * instead of a number", "profile P has no inlet level ..."), into why; 0, or -1 when it had none or
 * the driver cannot tell. */
int erg_pdu_source_bad_value(const struct erg_pdu_source *src, int channel, char *why,
                             size_t whylen);

/* Counter modulus in J for cfg.channels[channel] (index into channels),
 * for erg_pdu_counter.wrap_joules; 0 when the counter never wraps or the
 * driver cannot tell. */
double erg_pdu_source_wrap_joules(const struct erg_pdu_source *src, int channel);

/* A note the driver has for the collector to log once (driver's note
 * hook): 0 with the text, -1 none. */
int erg_pdu_source_note(struct erg_pdu_source *src, char *why, size_t whylen);

/* Drivers (one per file). */
extern const struct erg_pdu_driver erg_pdu_driver_modbus;
extern const struct erg_pdu_driver erg_pdu_driver_snmp;
extern const struct erg_pdu_driver erg_pdu_driver_redfish;
extern const struct erg_pdu_driver erg_pdu_driver_ipmi; /* ERG_HAVE_FREEIPMI */

/* ---- IPMI DCMI Get Power Reading (collector/pdu/dcmi.c): the BMC's
 * answer decoded, bytes in, reading or reason out (unit tests, fuzzing) */
#define ERG_DCMI_MAX_WATTS 20000.0 /* above: no server's reading */
enum erg_dcmi_verdict {
  ERG_DCMI_OK = 0,         /* current power, measurement active */
  ERG_DCMI_INACTIVE_TAKEN, /* marked inactive but non-zero (OpenBMC): taken, noted once */
  ERG_DCMI_ZERO,           /* 0 W: no reading */
  ERG_DCMI_ABSURD,         /* above ERG_DCMI_MAX_WATTS: no reading */
  ERG_DCMI_UNSUPPORTED,    /* completion code: the BMC has no DCMI power reading */
  ERG_DCMI_COMPLETION,     /* another non-zero completion code */
  ERG_DCMI_MALFORMED,      /* short, or not an answer to Get Power Reading */
};
struct erg_dcmi_power {
  int verdict;         /* enum erg_dcmi_verdict */
  int completion_code; /* -1: none (too short) */
  double watts;        /* the current power erg takes; NAN when no reading */
  /* Statistics over the BMC's own window (period_ms, anything from 0 s to
   * weeks): shown by the probe, never used. */
  double current_watts, min_watts, max_watts, avg_watts; /* NAN: not in the answer */
  uint32_t bmc_time_s; /* the BMC's timestamp (its clock), 0 none */
  uint32_t period_ms;  /* the statistics' window */
  bool active;         /* "power measurement active" bit */
};
/* The DCMI Get Power Reading request (netfn 0x2C, LUN 0) ipmi_cmd_raw
 * sends: command 0x02, group extension 0xDC, mode 1 (system power
 * statistics), two bytes 0. */
#define ERG_DCMI_NETFN 0x2C
#define ERG_DCMI_GROUP 0xDC
#define ERG_DCMI_CMD_POWER_READING 0x02
extern const uint8_t erg_dcmi_power_request[5];
/* rs: the response as ipmi_cmd_raw returns it (command, completion code,
 * group extension, current/min/max/average W as 16-bit little-endian,
 * timestamp and period as 32-bit little-endian, state). 0 when out->watts
 * is a reading (why: "" or, INACTIVE_TAKEN, the note to say once); -1
 * with the reason otherwise. Never reads past len. */
int erg_dcmi_power_decode(const uint8_t *rs, size_t len, struct erg_dcmi_power *out, char *why,
                          size_t whylen);
/* "invalid command", ... for an IPMI completion code; "unknown" else. */
const char *erg_ipmi_completion_text(int cc);

/* `erg pdu probe --driver ipmi`: one DCMI Get Power Reading, timed. */
struct erg_ipmi_probe {
  char where[256];        /* "lanplus 127.0.0.1:623 as admin, cipher suite 3, privilege user" */
  bool logged_in;         /* the session opened (in band: the device opened) */
  double login_seconds;   /* to open it; NAN when not tried */
  bool answered;          /* a response came: p holds it decoded */
  double request_seconds; /* the request to its answer or failure; NAN when not sent */
  struct erg_dcmi_power p;
  uint64_t t_ns;     /* the answer's arrival, CLOCK_REALTIME */
  bool used;         /* erg takes p.watts */
  char verdict[320]; /* what erg uses and why, or why it reads nothing */
};
/* 0 when the BMC answered (res->used says whether with a reading); -1
 * with a reason when c is refused; -2 with a reason when the BMC could not
 * be reached or logged in to (res says how far it got). */
int erg_pdu_ipmi_probe(const struct erg_pdu_source_config *c, struct erg_ipmi_probe *res, char *why,
                       size_t whylen);

/* Polls n SNMP sources concurrently from one loop; returns when every source
 * answered or timed out (its own timeout_seconds x (retries+1)), so an
 * unreachable PDU never delays the others. out[i] has srcs[i]->cfg.nchannels
 * entries. rc (may be NULL) gets each source's result (0 or -1), whys (may be
 * NULL) n reasons of whylen bytes each. Returns the number of sources with
 * at least one channel read. */
int erg_pdu_snmp_poll_many(struct erg_pdu_source **srcs, size_t n, struct erg_pdu_reading **out,
                           int *rc, char *whys, size_t whylen);

/* The same with a round limit (0 = none): after max_seconds, sources still
 * waiting fail this round ("no answer within the round limit") and their
 * requests are dropped, so a poller on a fixed period never falls behind
 * because of a dead PDU whose timeout x tries is longer than the period. */
int erg_pdu_snmp_poll_many_within(struct erg_pdu_source **srcs, size_t n,
                                  struct erg_pdu_reading **out, int *rc, char *whys, size_t whylen,
                                  double max_seconds);

/* Requests in flight at once across all sources (default 64; <= 0 resets
 * it). Process-wide; set before polling starts (benchmarks). */
void erg_pdu_snmp_set_max_inflight(int n);

/* "outlet", "inlet", ... as the config and the probe spell them. */
const char *erg_pdu_level_name(int level);
/* Channel c of cfg as a config names it after its level: "5", "210.5"
 * (unit 210), "L2" is not used; into buf, returned. */
const char *erg_pdu_channel_text(const struct erg_pdu_source_config *cfg, int c, char *buf,
                                 size_t len);
/* A unit as the config writes it: one or two arcs of 0..65535, dotted. */
bool erg_pdu_unit_ok(const char *unit);
/* A channel's number as a config writes it, the len bytes at s: "N" or
 * "UNIT.N" (the arcs before N are the unit, as erg_pdu_unit_ok; into
 * unit, "" none), N 0..65535 in decimal digits only. 0, or -1 when it is
 * none of those. */
int erg_pdu_unit_num(const char *s, size_t len, char unit[ERG_PDU_UNIT_MAX], long *num);
/* The levels (bit 1 << enum erg_pdu_level) a named profile of driver
 * offers; 0 when it cannot be told before the device answers (profile
 * auto, generic, an unknown name, or a driver without levels). */
unsigned erg_pdu_profile_levels(const char *driver, const char *profile);
/* The unit arcs a named profile's level numbers its rows by (0 none: the
 * level takes no UNIT.N); -1 when it cannot be told before the device
 * answers (auto, generic, a named-variable table, unknown). */
int erg_pdu_profile_unit_arcs(const char *driver, const char *profile, int level);

/* ---- physics across the levels of one device (collector/pdu/crosscheck.c) */
struct erg_pdu_xrow {
  int level;        /* enum erg_pdu_level */
  const char *unit; /* the row's unit ("" none): sums are per chain member */
  double watts;     /* the row's power, NAN none */
  double apparent;  /* its own VA, or V x A, NAN none: bears its W out */
  bool measured;    /* watts is the device's active power */
  bool refused;     /* out: its watts are impossible beside the others' */
  char reason[160]; /* out: why, when refused */
};
/* Outlets', banks' and phases' sums within their inlets (or device), the
 * inlets' within the device, and (complete: every row of each level was
 * read, as the probe reads them) the phases' near their inlets; a power of
 * ten apart is a wrong scale: the side its own apparent power does not
 * bear out is refused (both when neither is). Returns the rows refused;
 * why gets the first finding ("" none; with "impossible" in it). */
int erg_pdu_cross_check(struct erg_pdu_xrow *rows, int n, bool complete, char *why, size_t whylen);

/* ---- what one PDU or meter is and reads now (collector/pdu/probe.c), for
 * `erg pdu probe`: the operator's help to write its config section ---- */
#define ERG_PDU_PROBE_MAX_ROWS 256
#define ERG_PDU_PROBE_NAMELEN 64
#define ERG_PDU_PROBE_OID_MAX 160
/* What a row's SNMP detail holds per quantity. */
enum erg_pdu_probe_qty {
  ERG_PROBE_NAME = 0,         /* the row's label */
  ERG_PROBE_POWER,            /* W */
  ERG_PROBE_VA,               /* apparent power */
  ERG_PROBE_PF,               /* power factor */
  ERG_PROBE_CURRENT,          /* A */
  ERG_PROBE_VOLTAGE,          /* V */
  ERG_PROBE_ENERGY,           /* J */
  ERG_PROBE_VOLTAGE_BORROWED, /* the voltage of inlet, phase or device 1 */
  ERG_PROBE_NQ
};
struct erg_pdu_probe_row {
  int level, index; /* enum erg_pdu_level; the entity number (a meter: its unit id) */
  /* SNMP: the row's unit arcs ("210", "1.2"; docs/pdu.md), "" where the
   * level's rows have none; multi_unit: the level's rows span several
   * units, so the unit is part of the row's name ("outlet 210.5"). */
  char unit[ERG_PDU_UNIT_MAX];
  bool multi_unit;
  char name[ERG_PDU_PROBE_NAMELEN];
  char problem[160]; /* a value the device sent that is no reading; "" none */
  struct erg_pdu_reading r;
  bool have_detail; /* SNMP, read: each quantity's OID ("" none), factor and value */
  char oid[ERG_PROBE_NQ][ERG_PDU_PROBE_OID_MAX];
  double scale[ERG_PROBE_NQ], value[ERG_PROBE_NQ];
  /* per quantity: text read with this unit ("V", "" bare), NULL a number */
  const char *text_unit[ERG_PROBE_NQ];
};
struct erg_pdu_probe {
  char vendor[64], model[128], profile[32], reason[320], sysoid[160], sysdescr[256];
  bool snmp;                    /* levels below are known */
  bool absent[ERG_PDU_NLEVELS]; /* SNMP: levels the profile or the device lacks */
  int n;                        /* rows, level by level: device, inlets, phases, banks,
                                 * outlets, sensors (a meter: one outlet, its unit) */
  struct erg_pdu_probe_row rows[ERG_PDU_PROBE_MAX_ROWS];
};
/* Opens a source of c (name, channels and, for Modbus, port and unit id
 * filled in by the caller), identifies the device (SNMP) and reads every
 * row it offers into res. 0; -1 with a reason when c is refused (the
 * source cannot be opened with it); -2 with a reason when the device
 * failed (unreachable, unknown, no level answered). */
int erg_pdu_probe(const struct erg_pdu_source_config *c, struct erg_pdu_probe *res, char *why,
                  size_t whylen);

#endif
