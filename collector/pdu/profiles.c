/* SNMP vendor profiles as data. Every OID below was checked against the
 * vendor MIB (module and object named in the comment); the fixtures under
 * tests/fixtures/snmprec/ serve exactly these OIDs. Units: the MIB's
 * UNITS/DESCRIPTION clause, converted to W and J by the scale. */
#include <stdio.h>
#include <string.h>

#include "profiles.h"

#define WH 3600.0         /* J per Wh */
#define KWH_TENTH 360e3   /* J per 0.1 kWh */

const struct erg_snmp_profile erg_snmp_profiles[] = {
    /* APC/Schneider PowerNet-MIB, rPDU2 branch 1.3.6.1.4.1.318.1.1.26.
     * rPDU2OutletMeteredStatusEntry ...26.9.4.3.1: .3 Name, .7 Power (W),
     * .11 Energy (tenths of kWh). rPDU2DevicePropertiesNumMeteredOutlets
     * ...26.4.2.1.6, rPDU2DeviceStatusPower ...26.4.3.1.5 (hundredths of kW).
     * sysObjectID: masterSwitch family 1.3.6.1.4.1.318.1.3.4 (rPDU2 = .4.6,
     * some firmware .4.5). */
    {"apc-rpdu2", "APC/Schneider", "PowerNet-MIB rPDU2", {"1.3.6.1.4.1.318.1.3.4"},
     "1.3.6.1.4.1.318.1.1.26.9.4.3.1.7.%d", 1.0,
     "1.3.6.1.4.1.318.1.1.26.9.4.3.1.11.%d", KWH_TENTH,
     "1.3.6.1.4.1.318.1.1.26.9.4.3.1.3.%d", "1.3.6.1.4.1.318.1.1.26.4.2.1.6.1",
     "1.3.6.1.4.1.318.1.1.26.4.3.1.5.1", 10.0, NULL, NULL, NULL},
    /* Raritan PDU2-MIB (1.3.6.1.4.1.13742.6). measurementsOutletSensorValue
     * ...6.5.4.3.1.4.{pduId}.{outletId}.{sensorType}, sensorType activePower(5)
     * W, activeEnergy(8) Wh, both scaled by outletSensorDecimalDigits
     * ...6.3.5.4.1.7. outletName ...6.3.5.3.1.3, outletCount ...6.3.2.2.1.4,
     * measurementsInletSensorValue ...6.5.2.3.1.4 (inlet 1, activePower),
     * pduModel ...6.3.2.1.1.3. */
    {"raritan-pdu2", "Raritan", "PDU2-MIB", {"1.3.6.1.4.1.13742.6"},
     "1.3.6.1.4.1.13742.6.5.4.3.1.4.1.%d.5", 1.0,
     "1.3.6.1.4.1.13742.6.5.4.3.1.4.1.%d.8", WH,
     "1.3.6.1.4.1.13742.6.3.5.3.1.3.1.%d", "1.3.6.1.4.1.13742.6.3.2.2.1.4.1",
     "1.3.6.1.4.1.13742.6.5.2.3.1.4.1.1.5", 1.0, "1.3.6.1.4.1.13742.6.3.2.1.1.3.1",
     "1.3.6.1.4.1.13742.6.3.5.4.1.7.1.%d.5", "1.3.6.1.4.1.13742.6.3.5.4.1.7.1.%d.8"},
    /* Server Technology Sentry4-MIB (1.3.6.1.4.1.1718.4), index
     * {unit}.{inputCord}.{outlet}; unit 1, cord A. st4OutletMonitorEntry
     * ...1.8.3.1: .7 st4OutletActivePower (W), .14 st4OutletEnergy (Wh);
     * st4OutletName ...1.8.2.1.3; st4InputCordOutletCount ...1.3.2.1.24;
     * st4InputCordActivePower ...1.3.3.1.3 (W). */
    {"servertech-sentry4", "Server Technology", "Sentry4-MIB", {"1.3.6.1.4.1.1718.4"},
     "1.3.6.1.4.1.1718.4.1.8.3.1.7.1.1.%d", 1.0,
     "1.3.6.1.4.1.1718.4.1.8.3.1.14.1.1.%d", WH,
     "1.3.6.1.4.1.1718.4.1.8.2.1.3.1.1.%d", "1.3.6.1.4.1.1718.4.1.3.2.1.24.1.1",
     "1.3.6.1.4.1.1718.4.1.3.3.1.3.1.1", 1.0, NULL, NULL, NULL},
    /* Eaton EATON-EPDU-MIB (1.3.6.1.4.1.534.6.6.7), index
     * {strappingIndex}.{outlet}, master unit strapping 0. outletPowerEntry
     * ...7.6.5.1: .3 outletWatts (W), .4 outletWh (Unsigned32, Wh);
     * outletName ...7.6.1.1.3; outletCount ...7.1.2.1.22; inputTotalWatts
     * ...7.3.5.1.4.{strap}.{input}. */
    {"eaton-epdu", "Eaton", "EATON-EPDU-MIB", {"1.3.6.1.4.1.534.6.6.7"},
     "1.3.6.1.4.1.534.6.6.7.6.5.1.3.0.%d", 1.0,
     "1.3.6.1.4.1.534.6.6.7.6.5.1.4.0.%d", WH,
     "1.3.6.1.4.1.534.6.6.7.6.1.1.3.0.%d", "1.3.6.1.4.1.534.6.6.7.1.2.1.22.0",
     "1.3.6.1.4.1.534.6.6.7.3.5.1.4.0.1", 1.0, NULL, NULL, NULL},
    /* Vertiv/Geist VERTIV-V5-MIB (GEIST-V5-MIB), 1.3.6.1.4.1.21239.5.2.
     * pduOutletMeterEntry ...5.2.3.6.1: .3 Label, .12 RealPower (W), .15
     * Energy (Wh); pduTotalRealPower ...5.2.3.1.1.9 (W). No outlet count
     * object: probe counts the rows. */
    {"geist-v5", "Vertiv/Geist", "VERTIV-V5-MIB", {"1.3.6.1.4.1.21239.5"},
     "1.3.6.1.4.1.21239.5.2.3.6.1.12.%d", 1.0,
     "1.3.6.1.4.1.21239.5.2.3.6.1.15.%d", WH,
     "1.3.6.1.4.1.21239.5.2.3.6.1.3.%d", NULL,
     "1.3.6.1.4.1.21239.5.2.3.1.1.9.1", 1.0, NULL, NULL, NULL},
    /* CyberPower CPS-MIB ePDU2 (1.3.6.1.4.1.3808.1.1.6). ePDU2OutletMetered
     * StatusEntry ...6.6.2.4.1: .7 ActivePower (W); ePDU2OutletMeteredInfoName
     * ...6.6.2.3.1.4. The outlet energy column could not be verified against
     * the MIB, so this profile reads power only (use profile=generic with
     * oid_energy= if your model has it). */
    {"cyberpower-epdu2", "CyberPower", "CPS-MIB ePDU2", {"1.3.6.1.4.1.3808"},
     "1.3.6.1.4.1.3808.1.1.6.6.2.4.1.7.%d", 1.0, NULL, 0,
     "1.3.6.1.4.1.3808.1.1.6.6.2.3.1.4.%d", NULL, NULL, 0, NULL, NULL, NULL},
    /* Vertiv/Liebert MPH2/MPX rack PDUs, LIEBERT-GP-PDU-MIB (1.3.6.1.4.1.476.
     * 1.42.3.8). lgpPduRcpEntry ...3.8.50.20.1, index {lgpPduEntryIndex}.
     * {lgpPduRbEntryIndex}.{lgpPduRcpEntryIndex} (PDU, receptacle branch,
     * receptacle); the profile reads PDU 1, branch 1: .65 PwrOut (Unsigned32
     * W), .85 EnergyAccum (Unsigned32, 0.1 kWh), .10 UsrLabel.
     * lgpPduRbEntryRcpCount ...3.8.40.20.1.60.{pdu}.{rb};
     * lgpPduPsEntryPwrTotal ...3.8.30.20.1.65.{pdu}.{ps} (W). Not matched from
     * sysObjectID: every Liebert card (UPS, cooling, PDU) reports
     * 1.3.6.1.4.1.476.1.42 itself, so the profile is named in the config. */
    {"liebert-mph2", "Vertiv/Liebert", "LIEBERT-GP-PDU-MIB", {NULL},
     "1.3.6.1.4.1.476.1.42.3.8.50.20.1.65.1.1.%d", 1.0,
     "1.3.6.1.4.1.476.1.42.3.8.50.20.1.85.1.1.%d", KWH_TENTH,
     "1.3.6.1.4.1.476.1.42.3.8.50.20.1.10.1.1.%d", "1.3.6.1.4.1.476.1.42.3.8.40.20.1.60.1.1",
     "1.3.6.1.4.1.476.1.42.3.8.30.20.1.65.1.1", 1.0, NULL, NULL, NULL},
};
const size_t erg_snmp_nprofiles = sizeof erg_snmp_profiles / sizeof erg_snmp_profiles[0];

const struct erg_snmp_profile *erg_snmp_profile_find(const char *name) {
  for (size_t i = 0; i < erg_snmp_nprofiles; i++)
    if (strcmp(erg_snmp_profiles[i].name, name) == 0)
      return &erg_snmp_profiles[i];
  return NULL;
}

/* "1.3.6.1.4.1.318" is a prefix of "1.3.6.1.4.1.318.1" but not of
 * "1.3.6.1.4.1.3180": only whole arcs count. */
static size_t oid_prefix_len(const char *oid, const char *prefix) {
  if (*oid == '.')
    oid++;
  size_t n = strlen(prefix);
  if (strncmp(oid, prefix, n) != 0 || (oid[n] != '\0' && oid[n] != '.'))
    return 0;
  return n;
}

const struct erg_snmp_profile *erg_snmp_profile_match(const char *sysoid, const char **prefix) {
  const struct erg_snmp_profile *best = NULL;
  size_t bestlen = 0;
  for (size_t i = 0; i < erg_snmp_nprofiles; i++)
    for (int k = 0; k < ERG_SNMP_MAX_SYSOIDS && erg_snmp_profiles[i].sysoids[k]; k++) {
      size_t n = oid_prefix_len(sysoid, erg_snmp_profiles[i].sysoids[k]);
      if (n > bestlen) {
        bestlen = n;
        best = &erg_snmp_profiles[i];
        if (prefix)
          *prefix = erg_snmp_profiles[i].sysoids[k];
      }
    }
  return best;
}

int erg_snmp_oid_expand(const char *tmpl, int outlet, char *out, size_t outlen) {
  size_t o = 0;
  for (const char *p = tmpl; *p; p++) {
    char num[16];
    const char *piece = p;
    size_t plen = 1;
    if (p[0] == '%' && p[1] == 'd') {
      plen = (size_t)snprintf(num, sizeof num, "%d", outlet);
      piece = num;
      p++;
    }
    if (o + plen >= outlen)
      return -1;
    memcpy(out + o, piece, plen);
    o += plen;
  }
  out[o] = '\0';
  return 0;
}

/* Only digits and dots, with at most one "%d": anything else in a user's
 * template is a typo we would rather reject at startup. */
static int oid_template_ok(const char *t) {
  int pct = 0;
  for (const char *p = t; *p; p++) {
    if (p[0] == '%' && p[1] == 'd') {
      pct++;
      p++;
    } else if (!(*p == '.' || (*p >= '0' && *p <= '9'))) {
      return 0;
    }
  }
  return pct <= 1 && *t;
}

int erg_snmp_profile_generic(const struct erg_pdu_source_config *cfg,
                             struct erg_snmp_profile *out, char *why, size_t whylen) {
  memset(out, 0, sizeof *out);
  out->name = "generic";
  out->vendor = "generic";
  out->mib = "configured OIDs";
  const char *t[3] = {cfg->oid_power, cfg->oid_energy, cfg->oid_name};
  for (int i = 0; i < 3; i++)
    if (t[i][0] && !oid_template_ok(t[i])) {
      snprintf(why, whylen, "bad OID template '%s' (digits, dots and one %%d)", t[i]);
      return -1;
    }
  /* Scalars: the same characters, no outlet number. */
  const char *sc[2] = {cfg->oid_count, cfg->oid_total_power};
  for (int i = 0; i < 2; i++)
    if (sc[i][0] && (!oid_template_ok(sc[i]) || strstr(sc[i], "%d"))) {
      snprintf(why, whylen, "bad scalar OID '%s' (digits and dots)", sc[i]);
      return -1;
    }
  if (!cfg->oid_power[0] && !cfg->oid_energy[0]) {
    snprintf(why, whylen, "profile generic needs oid_power= and/or oid_energy=");
    return -1;
  }
  out->oid_power = cfg->oid_power[0] ? cfg->oid_power : NULL;
  out->power_scale = cfg->power_scale > 0 ? cfg->power_scale : 1.0;
  out->oid_energy = cfg->oid_energy[0] ? cfg->oid_energy : NULL;
  out->energy_scale = cfg->energy_scale_joules > 0 ? cfg->energy_scale_joules : WH;
  out->oid_name = cfg->oid_name[0] ? cfg->oid_name : NULL;
  out->oid_count = cfg->oid_count[0] ? cfg->oid_count : NULL;
  out->oid_total_power = cfg->oid_total_power[0] ? cfg->oid_total_power : NULL;
  out->total_power_scale = out->power_scale;
  return 0;
}
