#!/usr/bin/env python3
"""Runs prism-arith's AVX-512 kernels on an emulated CPU and checks them.

usage: run.py path/to/libprism_avx512_emu.so

The library (tools/avx512-emu) is loaded into this process. Each case is
built natively, then the library's entry point runs on BochsCPU, an x86-64
emulator with AVX-512, in this process's own address space: guest virtual,
guest physical and host addresses are the same (page tables map this
process's mappings to themselves, and each page the guest touches is backed
by the host's page on first use), so the kernels work on the case's own vectors. The entry point
returns to a page of `hlt`, which user mode may not run: the #GP there ends
the run. Then the case is checked natively against the scalar twin and the
host's kernels.

Before the cases, one run with AVX-512 state disabled (XCR0) must fault
with #UD: the kernels under test do run AVX-512 instructions.
"""

import ctypes
import mmap
import struct
import sys

import bochscpu
import bochscpu.cpu
import bochscpu.memory

PAGE = 4096
PT_BASE = 0x10_0000  # guest physical pages of the page tables
CHUNK_BASE = 0x4000_0000  # guest physical 2 MiB chunks of host memory
UD, GP = 6, 13
XCR0_AVX512 = 0xE7  # x87, SSE, AVX, opmask, ZMM_Hi256, Hi16_ZMM
XCR0_AVX = 0x07


def host_ranges():
    ranges = []
    with open("/proc/self/maps") as maps:
        for line in maps:
            start, end = line.split()[0].split("-")
            ranges.append((int(start, 16), int(end, 16)))
    return ranges


def fs_base():
    """This thread's FS base (thread-local storage), for the guest's FS."""
    libc = ctypes.CDLL(None, use_errno=True)
    base = ctypes.c_ulong()
    if libc.syscall(158, 0x1003, ctypes.byref(base)) != 0:  # arch_prctl(ARCH_GET_FS)
        raise OSError(ctypes.get_errno(), "arch_prctl(ARCH_GET_FS)")
    return base.value


class PageTables:
    """Page tables mapping each 2 MiB of this process's mappings to itself.

    Guest virtual addresses are host addresses. Guest physical ones cannot
    be (the emulated CPU has 40 physical address bits, and no 1 GiB pages):
    each 2 MiB chunk gets the next free 2 MiB of guest physical space, and
    `host` gives back the host address of a guest physical one. The tables
    take guest physical pages from PT_BASE up.
    """

    def __init__(self):
        self.next_table = PT_BASE
        self.next_chunk = CHUNK_BASE
        self.pml4 = self.table()
        self.pdpts = {}  # PML4 index -> PDPT
        self.pds = {}  # (PML4 index, PDPT index) -> PD
        self.chunks = {}  # host chunk -> guest physical chunk
        self.hosts = {}  # guest physical chunk -> host chunk

    def table(self):
        gpa, self.next_table = self.next_table, self.next_table + PAGE
        if gpa >= CHUNK_BASE:
            raise MemoryError("page tables past their space")
        hva = bochscpu.memory.allocate_host_page()
        if not hva:
            raise MemoryError("allocate_host_page")
        bochscpu.memory.page_insert(gpa, hva)
        bochscpu.memory.phy_write(gpa, [0] * PAGE)
        return gpa

    @staticmethod
    def entry(table, index, value):
        bochscpu.memory.phy_write(table + 8 * index, list(struct.pack("<Q", value)))

    def cover(self, start, end):
        for chunk in range(start >> 21, (end + (1 << 21) - 1) >> 21):
            if chunk in self.chunks:
                continue
            gpa, self.next_chunk = self.next_chunk, self.next_chunk + (1 << 21)
            if gpa >= 1 << 40:
                raise MemoryError("more host mappings than 40 bits of guest physical space")
            addr = chunk << 21
            i4, i3, i2 = addr >> 39 & 511, addr >> 30 & 511, addr >> 21 & 511
            if i4 not in self.pdpts:
                self.pdpts[i4] = self.table()
                self.entry(self.pml4, i4, self.pdpts[i4] | 0x7)  # present, writable, user
            if (i4, i3) not in self.pds:
                self.pds[(i4, i3)] = self.table()
                self.entry(self.pdpts[i4], i3, self.pds[(i4, i3)] | 0x7)
            self.entry(self.pds[(i4, i3)], i2, gpa | 0x87)  # and a 2 MiB page
            self.chunks[chunk] = gpa >> 21
            self.hosts[gpa >> 21] = chunk

    def host(self, gpa):
        chunk = self.hosts.get(gpa >> 21)
        return None if chunk is None else chunk << 21 | gpa & ((1 << 21) - 1)


class Emulator:
    def __init__(self):
        self.session = bochscpu.Session()
        self.ranges = host_ranges()
        self.session.missing_page_handler = self.missing_page
        self.tables = PageTables()
        # A page of hlt to return to.
        self.sentinel_map = mmap.mmap(-1, PAGE)
        self.sentinel_map.write(b"\xf4" * PAGE)
        self.sentinel = ctypes.addressof(ctypes.c_char.from_buffer(self.sentinel_map))
        self.stack = ctypes.create_string_buffer(1 << 20)
        self.fs = fs_base()
        self.fault = None

    def missing_page(self, gpa):
        host = self.tables.host(gpa)
        if host is None:
            raise RuntimeError(f"the guest touched guest physical {gpa:#x}, which maps no host memory")
        page = host & ~(PAGE - 1)
        if not any(s <= page < e for s, e in self.ranges):
            raise RuntimeError(f"the guest touched {host:#x}, which this process has not mapped")
        bochscpu.memory.page_insert(gpa & ~(PAGE - 1), page)

    def call(self, function, arg, xcr0=XCR0_AVX512):
        """Runs function(arg) on the emulated CPU; returns (vector, rip) of the fault that ended it."""
        self.ranges = host_ranges()
        for start, end in self.ranges:
            if end <= 1 << 47:
                self.tables.cover(start, end)
        top = ctypes.addressof(self.stack) + len(self.stack) - 256
        rsp = (top & ~0xF) - 8  # as after a call: rsp + 8 16-byte aligned
        ctypes.c_uint64.from_address(rsp).value = self.sentinel
        state = bochscpu.State()
        bochscpu.cpu.set_long_mode(state)
        state.cr3 = self.tables.pml4
        state.cr4 = state.cr4 | (1 << 9) | (1 << 10) | (1 << 18)  # OSFXSR, OSXMMEXCPT, OSXSAVE
        state.xcr0 = xcr0
        state.mxcsr = 0x1F80
        state.rflags = 0x2
        state.rip, state.rsp, state.rdi = function, rsp, arg
        cs = bochscpu.Segment()
        cs.present, cs.selector, cs.base, cs.limit, cs.attr = True, 0x33, 0, 0xFFFF_FFFF, 0x22FB
        state.cs = cs
        for name, base in (("ds", 0), ("es", 0), ("ss", 0), ("fs", self.fs), ("gs", 0)):
            seg = bochscpu.Segment()
            seg.present, seg.selector, seg.base, seg.limit, seg.attr = True, 0x2B, base, 0xFFFF_FFFF, 0xCF3
            setattr(state, name, seg)
        self.session.cpu.state = state
        self.fault = None

        def exception(session, cpu, vector, error):
            self.fault = (vector, session.cpu.state.rip)
            session.stop()

        hook = bochscpu.Hook()
        hook.exception = exception
        self.session.run([hook])
        return self.fault


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    lib = ctypes.CDLL(sys.argv[1])
    lib.prism_emu_cases.restype = ctypes.c_uint32
    lib.prism_emu_setup.argtypes = [ctypes.c_uint32]
    lib.prism_emu_setup.restype = ctypes.c_void_p
    lib.prism_emu_entry.restype = ctypes.c_size_t
    lib.prism_emu_check.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_size_t]
    lib.prism_emu_check.restype = ctypes.c_int

    emu = Emulator()
    entry = lib.prism_emu_entry()
    cases = lib.prism_emu_cases()
    msg = ctypes.create_string_buffer(1024)
    passed = failed = 0

    # The canary: with AVX-512 state off, the first case must stop on #UD.
    case = lib.prism_emu_setup(0)
    fault = emu.call(entry, case, xcr0=XCR0_AVX)
    lib.prism_emu_check(case, msg, len(msg))
    if fault is None or fault[0] != UD:
        print(f"canary: expected #UD with AVX-512 disabled, got {fault}: the kernels under test ran no AVX-512 instruction")
        failed += 1
    else:
        print(f"canary: #UD at {fault[1]:#x} with AVX-512 disabled: ok")
        passed += 1

    for i in range(cases):
        case = lib.prism_emu_setup(i)
        fault = emu.call(entry, case)
        # BochsCPU reports the rip past the hlt.
        if fault is None or fault[0] != GP or not emu.sentinel <= fault[1] <= emu.sentinel + 1:
            lib.prism_emu_check(case, msg, len(msg))
            name = msg.value.decode().split(":")[0]
            print(f"{name}: FAILED: fault {fault} before returning (sentinel {emu.sentinel:#x})")
            failed += 1
            continue
        bad = lib.prism_emu_check(case, msg, len(msg))
        line = msg.value.decode()
        if bad:
            print(f"FAILED {line}")
            failed += 1
        else:
            passed += 1
        if (i + 1) % 50 == 0:
            print(f"... {i + 1} of {cases} cases", flush=True)
    print(f"avx512-emu: {passed} passed, {failed} failed")
    sys.stdout.flush()
    # BochsCPU's bindings crash at interpreter exit; nothing is left to clean up.
    import os
    os._exit(1 if failed else 0)


if __name__ == "__main__":
    main()
