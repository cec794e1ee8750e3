#!/usr/bin/env python3
"""Lint nvdisasm output of warpkv's kernels for a ptxas code-generation fault (issue 24).

The fault (nvcc/ptxas 13.0, sm_90, -O1 and above): ptxas loads a kernel parameter into a uniform
register (UR*, shared by the whole warp) on one divergent path, places a YIELD (where the warp may
switch to another divergent path, which writes the same uniform register) and reads the register
after it. In be14d8a's hopscotch insert kernel the stash index `(first + j) & stash_mask_` was
formed with another path's mask (4095 instead of 63) and read past the stash: inserts answered
`found` for absent keys (docs/design/hopscotch.md, "The stash's GPU failure").

Rule (a straight-line scan per function, conservative): a uniform register written after the
function's first branch and read after a YIELD that follows that write, with no write in between.
Prints each hit; exits 1 when the count differs from --expect (default 0).

  scripts/sass_lint.py [--expect N] FILE.sass...     # nvdisasm -c output, or cuobjdump -sass
"""
import argparse
import gzip
import re
import sys

UNIFORM_WRITERS = ("S2UR", "R2UR", "VOTEU", "REDUX", "CS2UR")  # non-U opcodes whose destination is a UR


def functions(lines):
    kern, out = None, {}
    for line in lines:
        m = (re.search(r"Function : (\S+)", line) or re.match(r"^(_Z\w+):\s*$", line)
             or re.match(r"\s*\.text\.(_Z\w+):", line))
        if m:
            kern = m.group(1)
            out.setdefault(kern, [])
            continue
        m = re.match(r"\s*/\*([0-9a-f]{4,})\*/\s+(.*?);", line)
        if m and kern:
            out[kern].append((int(m.group(1), 16), re.sub(r"\s+", " ", m.group(2)).strip()))
    return out


def hits_of(ins):
    first_branch = next((a for a, t in ins if re.search(r"\bBRA\b", t)), 1 << 30)
    last_def, yielded, hits = {}, {}, []
    for addr, text in ins:
        body = re.sub(r"^@!?U?P\w+ ", "", text)
        opcode = body.split(" ")[0]
        base = opcode.split(".")[0]
        operands = body[len(opcode):].split(",")
        writes = (base.startswith("U") or base in UNIFORM_WRITERS) and operands and re.match(r"\s*UR\d+", operands[0])
        for operand in operands[1:] if writes else operands:
            for r in re.findall(r"\bUR(\d+)\b", operand):
                r = int(r)
                for rr in ([r, r + 1] if ".64" in opcode else [r]):
                    if rr in last_def and last_def[rr][0] > first_branch and yielded.get(rr):
                        hits.append("  %04x %-45s reads UR%d written at %04x (%s), YIELD at %s"
                                    % (addr, text, rr, last_def[rr][0], last_def[rr][1], yielded[rr]))
        if writes:
            r = int(re.match(r"\s*UR(\d+)", operands[0]).group(1))
            for rr in range(r, r + (2 if ".64" in opcode else 1)):
                last_def[rr], yielded[rr] = (addr, text), None
        if base == "YIELD":
            for rr in last_def:
                if not yielded.get(rr):
                    yielded[rr] = "%04x" % addr
    return hits


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--expect", type=int, default=0, help="hits expected in all files together")
    p.add_argument("files", nargs="+")
    a = p.parse_args()
    total = 0
    for path in a.files:
        opener = gzip.open if path.endswith(".gz") else open
        with opener(path, "rt") as f:
            fns = functions(f)
        for name, ins in fns.items():
            hits = hits_of(ins)
            if hits:
                print("%s: %s: %d uniform register(s) read after a YIELD" % (path, name, len(hits)))
                print("\n".join(hits))
            total += len(hits)
        print("%s: %d functions, %d instructions" % (path, len(fns), sum(len(i) for i in fns.values())))
    print("sass_lint: %d hit(s), expected %d" % (total, a.expect))
    return 0 if total == a.expect else 1


if __name__ == "__main__":
    sys.exit(main())
