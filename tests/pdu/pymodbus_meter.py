# SPDX-License-Identifier: GPL-3.0-or-later
"""A Modbus TCP energy meter served by pymodbus (Debian python3-pymodbus), an
implementation independent of libmodbus and of erg-pdusim, for
tests/pdu/modbus_pymodbus.sh. Unit 1 is shaped like an Eastron SDM630 (input
registers, float32 big-endian: total power at 0x34, import energy in kWh at
0x48), unit 2 like an SDM120 (power at 0x0C), unit 3 has a 0.1 W int16 and
a word-swapped uint32 Wh counter in holding registers (for the generic
register spec). Values come from the command line so the test knows them.
usage: pymodbus_meter.py PORT SDM630_W SDM630_KWH SDM120_W SDM120_KWH"""
import struct, sys

from pymodbus.datastore import (ModbusSequentialDataBlock, ModbusServerContext,
                                ModbusSlaveContext)
from pymodbus.server import StartTcpServer


def f32(x):  # float32 ABCD as two registers
    return list(struct.unpack(">HH", struct.pack(">f", x)))


def block(values):  # {address: [regs]} -> a 0-based block of 0x2000 registers
    regs = [0] * 0x2000
    for addr, words in values.items():
        regs[addr:addr + len(words)] = words
    return ModbusSequentialDataBlock(0, regs)


def unit(ir=None, hr=None):
    # zero_mode: register address N is block index N (pymodbus adds 1 otherwise).
    return ModbusSlaveContext(ir=block(ir or {}), hr=block(hr or {}), zero_mode=True)


port = int(sys.argv[1])
w630, e630, w120, e120 = map(float, sys.argv[2:6])
wh = int(e120 * 1000)
slaves = {
    1: unit(ir={0x34: f32(w630), 0x48: f32(e630)}),
    2: unit(ir={0x0C: f32(w120), 0x48: f32(e120)}),
    3: unit(hr={0x10: [int(round(w120 * 10)) & 0xFFFF], 0x20: [wh & 0xFFFF, wh >> 16]}),
}
StartTcpServer(context=ModbusServerContext(slaves=slaves, single=False),
               address=("127.0.0.1", port))
