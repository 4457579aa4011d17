/* Rittal (CMC-III based PDUs: PDU controller, sysObjectID 2606.7). */
#include "vendors.h"

/* RITTAL-CMC-III-MIB (cmcIII = enterprises.2606.7). No profile is defined:
 * the MIB's data cannot be written in this format without guessing.
 *
 * A CMC-III unit has no PDU tables. Every reading is one row of the generic
 * cmcIIIVarTable ...7.4.2.2.1.{col}.{cmcIIIVarDeviceIndex}.{cmcIIIVarIndex}:
 * .3 VarName ("Total.Power.Active.Value", "Phase L1.Current.Value", ...),
 * .4 VarType (value(2) for every measurement, whatever its quantity),
 * .5 VarUnit ("W", "V", "A", "kWh", "VA"), .7 VarScale (-10: divide by 10,
 * -100: divide by 100, 1: as is), .11 VarValueInt. The variable index is
 * the position of the variable in the device's list, which depends on the
 * model and configuration (phases, neutral measurement, fuses, sockets),
 * and the PDU's device index is not fixed either (on the recorded unit
 * the metering is device 2; device 1, "PDU-Controller", carries the
 * controller's own I/O, system and login variables).
 * The same holds for cmcIIIVarByTypeTable ...7.4.2.3 (indexed by type,
 * device, variable): the type does not tell power from voltage.
 *
 * What the format would need, per quantity column: (1) rows chosen by an
 * OCTET STRING match on cmcIIIVarName (e.g. "Phase L%d.Power.Active.Value",
 * the entity number taken from the name, or "Total.Power.Active.Value" for
 * the device level), since each quantity of an entity is a different row;
 * (2) a per-row scale read from an integer that is a signed multiplier or
 * divisor (cmcIIIVarScale), not a decimal-digit count or SI prefix; and
 * (3) the device index picked the same way (cmcIIIDevTable by name/type)
 * instead of written literally. */
ERG_VENDOR_PROFILES(rittal, NULL);
