/* IBM / Lenovo intelligent PDUs (iPDU, PDU+). */
#include "vendors.h"

/* IBM-PDU-MIB (ibmPowerDistributionUnitMIB = enterprises.2.6.223, revision
 * 2012-05-31; Lenovo-branded units answer the same MIB, ibmPduManufacturer
 * "lenovo"). One PDU per agent, single index per table.
 * PHASE   ibmPduPhaseTableEntry ...223.8.3.2.1, index ibmPduPhaseNumber:
 *   .4 ibmPduPhaseLastPowerReading ("the most recent power reading for this
 *   phase, in Watts"); ibmPduPhaseCount ...8.3.1.0 (single 1, three 3).
 * OUTLET  ibmPduOutletEntry ...223.8.2.2.1, index ibmPduOutletNumber: .2
 *   Name, .8 Voltage (IbmPduMilliVolt, mV), .15 LastPowerReading (W);
 *   ibmPduOutletCount ...8.2.1.0.
 * Not read: .9 ibmPduOutletCurrent (mA) and .7 ibmPduOutletPowerFactor (no
 * unit given). The 2009 revision of this MIB numbers the outlet columns
 * differently (.7 current, .8 max capacity, .9 warning threshold, .13 last
 * power reading: xCAT and fence-agents use those), so .9 is a threshold on
 * such firmware; leaving current out keeps a threshold from being shown as
 * a reading there, where .15 is absent and .8 (a capacity in mA) fails the
 * voltage check, so those outlets read nothing rather than a wrong value.
 * ibmPduModelNumber ...223.7.5.0. The agent's sysObjectID is not given by
 * the MIB: the tables find these units. */
#define IBMPDU "1.3.6.1.4.1.2.6.223"
static const struct erg_snmp_profile ibm_pdu = {
    .name = "ibm-pdu",
    .vendor = "IBM/Lenovo",
    .mib = "IBM-PDU-MIB",
    .sysoids = {IBMPDU},
    .oid_model = IBMPDU ".7.5.0",
    .PHASE = {.POWER = {IBMPDU ".8.3.2.1.4.%d", 1.0}, .count = IBMPDU ".8.3.1.0"},
    .OUTLET = {.NAME = {IBMPDU ".8.2.2.1.2.%d"},
               .POWER = {IBMPDU ".8.2.2.1.15.%d", 1.0},
               .VOLTAGE = {IBMPDU ".8.2.2.1.8.%d", 0.001},
               .count = IBMPDU ".8.2.1.0"},
};

ERG_VENDOR_PROFILES(ibm, &ibm_pdu);
