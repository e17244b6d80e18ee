#!/usr/bin/env python3
"""ptx_diff.py - the compiler and the judge of tools/ptx_diff.sh (see there).

  ptx_diff.py compile CACHE JOBS < todo       todo: "HASH SOURCE" lines; writes CACHE/HASH.ptx
                                              (or CACHE/HASH.err with NVRTC's log)
  ptx_diff.py compare WORK CACHE N CUBIN JOBS one verdict a unit: "ID identical|names|differ|
                                              broken [note]"

NVRTC is called in-process as runtime/nvrtc.c calls it (compute_90 for PTX, sm_90 for a CUBIN,
--std=c++17, -default-device), without -lineinfo; every program is named unit.cu, so that the
two sides' internal names differ at most by NVRTC's hash.
"""
import ctypes
import glob
import multiprocessing
import os
import re
import struct
import sys

OPTS = [b"--std=c++17", b"-default-device", b"--no-source-include"]


def load_nvrtc():
    cands = [os.environ.get("NVRTC", "")]
    for d in (os.environ.get("CUDA_HOME", "/usr/local/cuda") + "/lib64", "/usr/local/cuda/lib64",
              "/usr/lib/x86_64-linux-gnu", "/usr/local/cuda/lib"):
        cands += sorted(glob.glob(d + "/libnvrtc.so.*"), reverse=True) + [d + "/libnvrtc.so"]
    for c in cands:
        if c and "builtins" not in c and os.path.exists(c):
            try:
                return ctypes.CDLL(c)
            except OSError:
                pass
    sys.exit("ptx_diff: no libnvrtc.so found (set NVRTC or CUDA_HOME)")


LIB = None


def nvrtc(src, arch, cubin):
    """PTX text (or CUBIN bytes) of src, or (None, log)."""
    global LIB
    if LIB is None:
        LIB = load_nvrtc()
    prog = ctypes.c_void_p()
    if LIB.nvrtcCreateProgram(ctypes.byref(prog), src.encode(), b"unit.cu", 0, None, None) != 0:
        return None, "nvrtcCreateProgram failed"
    opts = [b"--gpu-architecture=" + arch.encode()] + OPTS
    rc = LIB.nvrtcCompileProgram(prog, len(opts), (ctypes.c_char_p * len(opts))(*opts))
    n = ctypes.c_size_t()
    if rc != 0:
        LIB.nvrtcGetProgramLogSize(prog, ctypes.byref(n))
        buf = ctypes.create_string_buffer(n.value)
        LIB.nvrtcGetProgramLog(prog, buf)
        LIB.nvrtcDestroyProgram(ctypes.byref(prog))
        return None, buf.value.decode(errors="replace")
    size, get = (LIB.nvrtcGetCUBINSize, LIB.nvrtcGetCUBIN) if cubin else (LIB.nvrtcGetPTXSize, LIB.nvrtcGetPTX)
    size(prog, ctypes.byref(n))
    buf = ctypes.create_string_buffer(n.value)
    get(prog, buf)
    LIB.nvrtcDestroyProgram(ctypes.byref(prog))
    return (buf.raw[:n.value] if cubin else buf.value.decode()), None


def compile_one(job):
    h, path, cache = job
    out = os.path.join(cache, h)
    ptx, log = nvrtc(open(path).read(), "compute_90", False)
    if ptx is None:
        with open(out + ".err", "w") as f:
            f.write(log)
    else:
        with open(out + ".ptx.tmp", "w") as f:
            f.write(ptx)
        os.replace(out + ".ptx.tmp", out + ".ptx")


# ---- normalizing ----

INTERNAL = re.compile(r"(\d+)_INTERNAL_[0-9a-f]{8}_(\d+)_")
SHARED = re.compile(r"^\s*\.shared\s.*?\s([A-Za-z_$][\w$]*)\s*(\[[^\]]*\])?\s*;")


def cut_internal(line):
    """_ZN<len>_INTERNAL_<hash>_<len>_<file>_... -> _ZN_INTERNAL_..."""
    while True:
        m = INTERNAL.search(line)
        if not m:
            return line
        line = line[:m.start()] + "_INTERNAL_" + line[m.end() + int(m.group(2)):]


def level1(text):
    return [cut_internal(l.rstrip()) for l in text.splitlines()
            if l.strip() and not l.lstrip().startswith("//") and not re.match(r"\s*\.(file|loc)\b", l)]


def level2(lines):
    """__shared__ variables renamed by their first use in the code, declarations sorted."""
    decl = {}
    for i, l in enumerate(lines):
        m = SHARED.match(l)
        if m:
            decl[m.group(1)] = i
    if not decl:
        return lines
    pat = re.compile(r"(?<![\w$])(" + "|".join(map(re.escape, decl)) + r")(?![\w$])")
    where = set(decl.values())
    idx = {}
    for i, l in enumerate(lines):
        if i not in where:
            for m in pat.finditer(l):
                idx.setdefault(m.group(1), "__shared_%d" % len(idx))
    for nm in decl:
        idx.setdefault(nm, "__shared_unused_%d" % len(idx))
    sub = lambda l: pat.sub(lambda m: idx[m.group(1)], l)
    return sorted(sub(lines[i]) for i in where) + [sub(l) for i, l in enumerate(lines) if i not in where]


def elf_sections(data):
    """name -> contents (size for NOBITS) of an ELF64 little-endian file."""
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3A)
    hdr = [struct.unpack_from("<IIQQQQIIQQ", data, shoff + i * shentsize) for i in range(shnum)]
    names = hdr[shstrndx][4]
    out = {}
    for h in hdr:
        name = data[names + h[0]:data.index(b"\0", names + h[0])].decode()
        out[name] = h[5] if h[1] == 8 else data[h[4]:h[4] + h[5]]
    return out


def machine_code(path):
    cub, log = nvrtc(open(path).read(), "sm_90", True)
    if cub is None:
        return None
    s = elf_sections(cub)
    return {k: v for k, v in s.items() if k.startswith(".text.") or k.startswith(".nv.shared.")}


def judge(job):
    work, cache, i, cubin = job
    uid = "%05d" % i
    sides = []
    for side in ("before", "after"):
        h = open(os.path.join(work, uid + "." + side + ".hash")).read().strip()
        p = os.path.join(cache, h + ".ptx")
        sides.append(level1(open(p).read()) if os.path.exists(p) else None)
    a, b = sides
    if a is None or b is None:
        return uid + " broken"
    if a == b:
        return uid + " identical"
    la, lb = level2(a), level2(b)
    verdict = "names" if la == lb else "differ"
    if os.environ.get("KEEP") == "1":
        for side, t in (("before", la), ("after", lb)):
            with open(os.path.join(work, uid + "." + side + ".ptx"), "w") as f:
                f.write("\n".join(t) + "\n")
    note = ""
    if verdict == "differ":
        note = "%d of %d PTX lines" % (sum(1 for x, y in zip(la, lb) if x != y) + abs(len(la) - len(lb)),
                                      len(la))
    if cubin:
        ma = machine_code(os.path.join(work, uid + ".before.cu"))
        mb = machine_code(os.path.join(work, uid + ".after.cu"))
        note += ("; " if note else "") + ("SASS identical" if ma is not None and ma == mb else "SASS differs")
    return uid + " " + verdict + (" " + note if note else "")


def main():
    if sys.argv[1] == "compile":
        cache, jobs = sys.argv[2], int(sys.argv[3])
        todo = {}
        for line in sys.stdin:
            h, path = line.split(None, 1)
            todo.setdefault(h, path.strip())
        with multiprocessing.Pool(jobs) as pool:
            for _ in pool.imap_unordered(compile_one, [(h, p, cache) for h, p in todo.items()]):
                pass
    else:
        work, cache, n, cubin, jobs = sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5] == "1", int(sys.argv[6])
        with multiprocessing.Pool(jobs) as pool:
            for v in pool.imap(judge, [(work, cache, i, cubin) for i in range(n)]):
                print(v)


if __name__ == "__main__":
    main()
