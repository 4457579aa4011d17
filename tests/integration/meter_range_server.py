# SPDX-License-Identifier: GPL-3.0-or-later
"""A Modbus TCP meter (Debian python3-pymodbus) whose units answer values
that are no readings, for tests/integration/meter_range.sh. Input registers
at 0x34 hold float32 power: unit 1 -500 W, unit 2 NaN, unit 3 150 W; unit 4
holds 4,294,967,295 (a uint32's all-ones) in holding registers 0x10-0x11.
usage: meter_range_server.py PORT"""
import struct, sys

from pymodbus.datastore import (ModbusSequentialDataBlock, ModbusServerContext,
                                ModbusSlaveContext)
from pymodbus.server import StartTcpServer


def f32(x):  # float32 ABCD as two registers
    return list(struct.unpack(">HH", struct.pack(">f", x)))


def unit(ir=None, hr=None):
    def block(values):
        regs = [0] * 0x100
        for addr, words in (values or {}).items():
            regs[addr:addr + len(words)] = words
        return ModbusSequentialDataBlock(0, regs)
    # zero_mode: register address N is block index N (pymodbus adds 1 otherwise).
    return ModbusSlaveContext(ir=block(ir), hr=block(hr), zero_mode=True)


slaves = {
    1: unit(ir={0x34: f32(-500)}),
    2: unit(ir={0x34: f32(float("nan"))}),
    3: unit(ir={0x34: f32(150)}),
    4: unit(hr={0x10: [0xFFFF, 0xFFFF]}),
}
StartTcpServer(context=ModbusServerContext(slaves=slaves, single=False),
               address=("127.0.0.1", int(sys.argv[1])))
