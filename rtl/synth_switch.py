#!/usr/bin/env python3
"""Helpers of rtl/synth_switch.sh (the whole switch's synthesis, one module a job).

  synth_switch.py modules DESIGN.il OUT.il [NAMES]   rename Yosys's derived
      modules ($paramod...) to plain names and print one line a module:
      NAME INSTANCES CHILD... (INSTANCES: how many the top holds in all,
      through the hierarchy), children after their parents; NAMES gets a
      line a module, NAME and Yosys's own name (for a derived module, a
      digest of its parameters): a plain name's suffix is 8 hex digits of
      that name's SHA-1, so a module keeps its name from run to run while
      its parameters do (a reused netlist names its children rightly)
  synth_switch.py cut NETLIST.json OUT.json  a flattened netlist for
      logic-depth: each LUT-RAM's write side (data, write enable, clock)
      moved to a flip-flop-like cell of its own, so a path into a LUT-RAM's
      write ends there (the write is clocked) and its read address stays a
      path through it; the write data no longer closes a false loop through
      the read (../shared/tools/logic-depth follows every LUT-RAM input when
      it looks for loops)
  synth_switch.py trace NETLIST.json N LOGIC_DEPTH   the N deepest endpoints of
      a (cut) netlist, each path's cells with the net each drives, by name
      (one endpoint a register bit: a bus shows once)
  synth_switch.py paths NETLIST.json LEVELS LOGIC_DEPTH   every endpoint
      deeper than LEVELS, grouped by the first and the last named net on
      its deepest path (bit and generate indices folded): a line a group,
      deepest first, with its endpoint count and that path's named nets.
      What a whole-switch run's depth report cannot say: where the
      over-budget paths start
  synth_switch.py paths NETLIST.json LEVELS LOGIC_DEPTH KEEP_DIR   the same,
      and for each group the source lines of the adds and compares on its
      deepest path (from the module logs of a SYNTH_KEEP run, in rtl/sv's
      line numbers as the files are now: rerun after editing them). Yosys
      numbers cells per module, so a number two logs share shows both
"""
import hashlib
import json
import re
import sys
from collections import defaultdict

# Ports of a LUT-RAM that address its asynchronous read: the ones
# logic-depth follows through the cell (its own list).
READ_PREFIX = ("A", "DPRA", "ADDR", "RADR")
LUTRAM = ("RAM16X1", "RAM32X1", "RAM64X1", "RAM128X1", "RAM256X1", "RAM512X1", "RAM32M", "RAM64M")


def plain_name(yosys_name):
    """A derived module's plain name: its base and a digest of Yosys's name for it."""
    base = yosys_name.split("\\")[1]
    return f"{base}_{hashlib.sha1(yosys_name.encode()).hexdigest()[:8]}"


def modules(src, dst, names_out=None):
    text = open(src).read()
    names = re.findall(r"^module (\S+)$", text, re.M)
    plain = {}
    used = set(n.lstrip("\\") for n in names if not n.startswith("$paramod"))
    for n in names:
        if not n.startswith("$paramod"):
            continue
        new = plain_name(n)
        if new in used:
            sys.exit(f"synth_switch.py: two modules named {new}")
        used.add(new)
        plain[n] = "\\" + new
    # Whole tokens only: RTLIL separates them by whitespace.
    out = re.sub(r"(?<!\S)\$paramod\S*", lambda m: plain.get(m.group(0), m.group(0)), text)
    open(dst, "w").write(out)
    if names_out:
        with open(names_out, "w") as f:
            for n in names:
                f.write(f"{plain.get(n, n).lstrip(chr(92))} {n}\n")
    # Each module's children (cell types that are modules of the design).
    mods = {}
    cur = None
    top = []
    attrs = []
    for line in out.splitlines():
        s = line.strip()
        if line.startswith("attribute "):
            attrs.append(s)
        elif s.startswith("module "):
            cur = s.split()[1].lstrip("\\")
            mods[cur] = defaultdict(int)
            if "attribute \\top 1" in attrs:
                top.append(cur)
            attrs = []
        elif s == "end" and cur is not None and line.startswith("end"):
            cur = None
        elif s.startswith("cell ") and cur is not None:
            mods[cur][s.split()[1].lstrip("\\")] += 1
    for m in mods:
        mods[m] = {c: k for c, k in mods[m].items() if c in mods}
    if not top:
        used_by = {c for m in mods for c in mods[m]}
        top = [m for m in mods if m not in used_by]
    if len(top) != 1:
        sys.exit(f"synth_switch.py: {len(top)} top modules in {src}")
    inst = defaultdict(int)
    order = []

    def visit(m, k):
        inst[m] += k
        for c, n in mods[m].items():
            visit(c, k * n)

    visit(top[0], 1)
    # Parents before children: a depth-first order, each module after all its users.
    seen = set()

    def post(m):
        if m in seen:
            return
        seen.add(m)
        for c in mods[m]:
            post(c)
        order.append(m)

    post(top[0])
    for m in reversed(order):
        print(m, inst[m], *sorted(mods[m]))


def cut(src, dst):
    d = json.load(open(src))
    for mod in d["modules"].values():
        cells = mod.get("cells", {})
        extra = {}
        for name, c in cells.items():
            if not c["type"].startswith(LUTRAM):
                continue
            dirs, conns = c.get("port_directions", {}), c.get("connections", {})
            moved = [p for p, io in dirs.items() if io == "input" and not p.startswith(READ_PREFIX)]
            if not moved:
                continue
            extra[name + "$write"] = {
                "type": "FDRE_LUTRAM_WRITE",
                "port_directions": {p: "input" for p in moved},
                "connections": {p: conns.get(p, []) for p in moved},
            }
            for p in moved:
                del dirs[p]
                conns.pop(p, None)
        cells.update(extra)
    json.dump(d, open(dst, "w"))


def load_depth(src, tool):
    """The netlist's top module analysed by logic-depth: (ends, via, cells, name of a bit)."""
    import importlib.machinery
    import importlib.util
    loader = importlib.machinery.SourceFileLoader("logic_depth", tool)
    spec = importlib.util.spec_from_loader("logic_depth", loader)
    ld = importlib.util.module_from_spec(spec)
    loader.exec_module(ld)
    d = json.load(open(src))
    mods = d["modules"]
    top = next(m for m, v in mods.items() if str(v.get("attributes", {}).get("top", "0")).strip("0"))
    mod = mods[top]
    name = {}
    for net, v in mod.get("netnames", {}).items():
        for b in v["bits"]:
            if isinstance(b, int) and (b not in name or name[b].startswith("$") and not net.startswith("$")):
                name[b] = net
    ends, via, cells, _ = ld.analyse(mod)
    ends.sort(key=lambda e: -e[0])
    return ends, via, cells, name


def path_nets(end_cell, via, cells, name):
    """The cells of a path (start first) and the net each drives, by name ('?' if none)."""
    chain = []
    c = end_cell
    while c is not None and len(chain) < 1000:
        cell = cells[c]
        outs = [b for p, io in cell.get("port_directions", {}).items() if io == "output"
                for b in cell["connections"].get(p, []) if isinstance(b, int)]
        chain.append((cell["type"], name.get(outs[0], "?") if outs else "?"))
        c = via.get(c)
    chain.reverse()
    return chain


def fold(net):
    """A net's name with its bit and generate indices folded: one name a bus."""
    return re.sub(r"\[\d+\]", "[]", net)


def trace(src, n, tool):
    ends, via, cells, name = load_depth(src, tool)
    seen = set()
    shown = 0
    for a, frm, end in ends:
        if shown >= n:
            break
        chain = path_nets(frm, via, cells, name)
        # One endpoint a register: the last named net before it, folded
        # (an endpoint's own cell name says nothing: Yosys numbers them).
        named = [net for _, net in chain if not net.startswith("$") and net != "?"]
        key = fold(named[-1]) if named else end
        if key in seen:
            continue
        seen.add(key)
        shown += 1
        print(f"{a:.2f} -> {end}")
        print("    " + " > ".join(f"{t}({net})" for t, net in chain))


def source_lines(keep):
    """Yosys's arithmetic cell number -> its source lines ("prism_node.sv:2274"),
    from the module logs of a kept run; lines as rtl/sv's files number them
    (synth_switch.sh inlines the package's constants after the import line)."""
    import glob
    import os
    here = os.path.dirname(os.path.abspath(__file__))
    nparams = sum(1 for l in open(os.path.join(here, "sv", "prism_pkg.sv")) if l.startswith("  localparam"))
    imports = {}

    def repo_line(f, n):
        if f not in imports:
            imports[f] = None
            try:
                for i, l in enumerate(open(os.path.join(here, "sv", f)), 1):
                    if "import prism_pkg::*;" in l:
                        imports[f] = i
                        break
            except OSError:
                pass
        at = imports[f]
        return n - nparams if at is not None and n > at else n

    cells = defaultdict(set)
    for log in glob.glob(os.path.join(keep, "*.log")):
        for line in open(log, errors="replace"):
            m = re.search(r"creating \$(?:alu|macc) cell for (.*): \$auto\$alumacc\.cc:\d+:replace_alu\$(\d+)", line)
            if m:
                for f, n in re.findall(r"/src/([\w.]+\.sv):(\d+)", m.group(1)):
                    cells[m.group(2)].add(f"{f}:{repo_line(f, int(n))}")
    return cells, repo_line


def path_lines(chain, alu, repo_line):
    """The source lines of a path's arithmetic cells, in path order."""
    out = []
    for _, net in chain:
        found = [l for m in re.finditer(r"replace_alu\$(\d+)", net) for l in sorted(alu.get(m.group(1), ()))]
        found += [f"{f}:{repo_line(f, int(n))}" for f, n in re.findall(r"/src/([\w.]+\.sv):(\d+)", net)]
        for l in found:
            if l not in out:
                out.append(l)
    return out


def paths(src, levels, tool, keep=None):
    alu, repo_line = source_lines(keep) if keep else ({}, None)
    ends, via, cells, name = load_depth(src, tool)
    count = defaultdict(int)
    worst = {}
    for a, frm, end in ends:
        if a <= levels:
            break
        chain = path_nets(frm, via, cells, name)
        named = [fold(net) for _, net in chain if not net.startswith("$") and net != "?"]
        # The endpoint's own register, by the net its output drives.
        cell = cells.get(end.split(" ", 1)[-1].rsplit(".", 1)[0])
        if cell is not None:
            outs = [b for p, io in cell.get("port_directions", {}).items() if io == "output"
                    for b in cell["connections"].get(p, []) if isinstance(b, int)]
            if outs and not name.get(outs[0], "$").startswith("$"):
                named.append(fold(name[outs[0]]) + " (end)")
        # A path through no named net: its endpoint's kind (Yosys numbers the cells).
        key = (named[0], named[-1]) if named else ("(no named net)", re.sub(r"\d+", "N", end))
        count[key] += 1
        if key not in worst:
            worst[key] = (a, named, path_lines(chain, alu, repo_line) if keep else [])
    print(f"{sum(count.values())} endpoints deeper than {levels:g} levels, {len(count)} groups (first named net -> last named net)")
    for key, (a, named, lines) in sorted(worst.items(), key=lambda kv: (-kv[1][0], -count[kv[0]])):
        print(f"{a:6.2f} {count[key]:7d}  {key[0]} -> {key[1]}")
        if len(named) > 2:
            print("               via " + " > ".join(named[1:-1])[:300])
        if lines:
            print("               at " + ", ".join(lines)[:300])


if __name__ == "__main__":
    if len(sys.argv) in (4, 5) and sys.argv[1] == "modules":
        modules(*sys.argv[2:])
    elif len(sys.argv) == 5 and sys.argv[1] == "trace":
        trace(sys.argv[2], int(sys.argv[3]), sys.argv[4])
    elif len(sys.argv) in (5, 6) and sys.argv[1] == "paths":
        paths(sys.argv[2], float(sys.argv[3]), sys.argv[4], sys.argv[5] if len(sys.argv) == 6 else None)
    elif len(sys.argv) == 4 and sys.argv[1] == "cut":
        cut(sys.argv[2], sys.argv[3])
    else:
        sys.exit(__doc__)
