"""The two-thread model splits the tensor engine: each PE column group runs on its own thread.

Verilator's scheduler places the design's blocks on the model's threads by its estimate of their
cost, once, when it Verilates. The PE array is built as two independent column groups
(rtl/ncore_pe_array.sv) so that they land on different threads; if another block looks heavier
to the estimate (a loop unrolled into many copies, say), the scheduler may put both groups on one
thread, and the two-thread model then runs the array serially and pays the threads' hand-over on
top: slower than the single-thread model. This reads the Verilated C++ of the two-thread model
and fails when its groups share a thread, so the regression is caught when the RTL changes, not
when someone times a run.

  check_mt_partition.py VERILATED_DIR   (e.g. build/sim/verilated_trn2_mt)

The generated code's shape is Verilator 5's: the evaluation of the non-blocking region of each
thread is a function `..._Vthread__nba__T` that calls the blocks' functions `..._nba_sequent__TOP__N`.
"""
import glob
import os
import re
import sys

vdir = sys.argv[1]
sources = sorted(glob.glob(os.path.join(vdir, "*.cpp")))
if not sources:
    sys.exit(f"{vdir}: no Verilated C++ (build the two-thread model first)")

func_re = re.compile(r"^(?:VL_INLINE_OPT )?void \w+___nba_sequent__TOP__(\d+)\(\w+\* vlSelf\) \{")
thread_re = re.compile(r"^void \w+____Vthread__nba__(\d+)\(void\* voidSelf, bool even_cycle\) \{")
call_re = re.compile(r"___nba_sequent__TOP__(\d+)\(vlSelf\)")
# A column group's partial sums, ps_q of the PE array's generate block g_grp[N] (only the array has
# one), whatever Verilator's mangled names of the hierarchy above it.
group_re = re.compile(r"g_grp__BRA__(\d+)__KET__\w*ps_q\b")

refs = {}           # (column group, block function) -> references to the group's partial sums
block_thread = {}   # block function -> thread that calls it
for path in sources:
    block = thread = None
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            m = func_re.match(line)
            if m:
                block, thread = m.group(1), None
                continue
            m = thread_re.match(line)
            if m:
                block, thread = None, m.group(1)
                continue
            if line.startswith("}"):
                block = thread = None
                continue
            if block is not None:
                for g in group_re.findall(line):
                    refs[(g, block)] = refs.get((g, block), 0) + 1
            elif thread is not None:
                for c in call_re.findall(line):
                    block_thread[c] = thread

# each group's step is the block that refers to its partial sums most (its 128 x 64 PEs)
group_block = {}
for (g, b), n in sorted(refs.items()):
    if n > refs.get((g, group_block.get(g)), 0):
        group_block[g] = b
threads = sorted(set(block_thread.values()))
if len(threads) < 2:
    sys.exit(f"{vdir}: found {len(threads)} evaluation thread(s); is this a two-thread model?")
if len(group_block) < 2:
    sys.exit(f"{vdir}: found the partial sums of {len(group_block)} PE column group(s), expected 2")
placed = {g: block_thread.get(b) for g, b in sorted(group_block.items())}
for g, b in sorted(group_block.items()):
    print(f"PE column group {g}: block {b}, thread {placed[g]}")
if None in placed.values():
    sys.exit("a PE column group's block is called by no evaluation thread")
if len(set(placed.values())) < len(placed):
    sys.exit("the PE column groups share a thread: the two-thread model would run the array serially "
             "(Verilator's cost estimate sees another block as heavier; see rtl/ncore_pe_array.sv)")
print(f"the {len(placed)} PE column groups run on {len(set(placed.values()))} different threads")
