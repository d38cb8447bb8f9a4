#!/usr/bin/env bash
# A compiled extension built for another CUDA major than the GPU machine's torch: a package
# linked against libc10 and libcudart.so.12 (a stand-in library with that soname, as a CUDA 12
# wheel links) beside torch's CUDA 13 build. `envdoctor check` names it and the CUDA it was built
# for; the same package linked against torch's own CUDA 13 runtime passes; the default check
# of the untouched machine stays healthy. Needs gcc and Python.h; no root. About 1 minute.
set +e
export NO_COLOR=1
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
. "$HERE/../faults.sh"  # the assertions
OUT=$(mktemp -d); cd "$OUT" || exit 1

python3 - "$OUT" <<'PY'
import glob, os, subprocess, sys, sysconfig
import torch
out = sys.argv[1]
lib = os.path.join(os.path.dirname(torch.__file__), "lib")
cu13 = sorted(glob.glob(os.path.join(os.path.dirname(os.path.dirname(torch.__file__)), "nvidia", "**", "libcudart.so.13*"), recursive=True))
os.makedirs(f"{out}/cuda12", exist_ok=True)
open(f"{out}/cuda12/c.c", "w").write("int cudart_stub(void) { return 0; }\n")
subprocess.run(["gcc", "-shared", "-fPIC", "-o", f"{out}/cuda12/libcudart.so.12", f"{out}/cuda12/c.c", "-Wl,-soname,libcudart.so.12"], check=True)
src = ('#include <Python.h>\nextern char _ZN3c1019UndefinedTensorImpl10_singletonE;\n'
       'static PyObject *run(PyObject *s, PyObject *a) { (void)&_ZN3c1019UndefinedTensorImpl10_singletonE; Py_RETURN_NONE; }\n'
       'static PyMethodDef m[] = {{"run", run, METH_NOARGS, ""}, {0}};\n'
       'static struct PyModuleDef d = {PyModuleDef_HEAD_INIT, "_C", 0, -1, m};\nPyMODINIT_FUNC PyInit__C(void) { return PyModule_Create(&d); }\n')
ext = sysconfig.get_config_var("EXT_SUFFIX")
for site, dist, cudart in (("site12", "cu12-ext", f"{out}/cuda12"), ("site13", "cu13-ext", os.path.dirname(cu13[0]) if cu13 else None)):
    if cudart is None:
        print("torch's libcudart.so.13 not found: the CUDA 13 case is skipped"); continue
    pkg = f"{out}/{site}/{dist.replace('-', '')}"
    os.makedirs(pkg)
    open(f"{pkg}/__init__.py", "w").write("from . import _C\n")
    open(f"{out}/src.c", "w").write(src)
    need = "libcudart.so.12" if site == "site12" else os.path.basename(cu13[0])
    subprocess.run(["gcc", "-shared", "-fPIC", "-o", f"{pkg}/_C{ext}", f"{out}/src.c", f"-I{sysconfig.get_paths()['include']}",
                    f"-L{lib}", "-Wl,--no-as-needed", "-lc10", f"-L{cudart}", f"-l:{need}"]
                   + ([f"-Wl,-rpath,{cudart}"] if site == "site13" else []), check=True)  # CUDA 12's runtime is absent, as in the field
    info = f"{out}/{site}/{dist.replace('-', '_')}-1.0.dist-info"
    os.makedirs(info)
    open(f"{info}/METADATA", "w").write(f"Metadata-Version: 2.1\nName: {dist}\nVersion: 1.0\nRequires-Dist: torch\n")
    open(f"{info}/top_level.txt", "w").write(dist.replace("-", "") + "\n")
    open(f"{info}/RECORD", "w").write(f"{dist.replace('-', '')}/__init__.py,,\n{dist.replace('-', '')}/_C{ext},,\n")
    print("built", pkg, "linked with", need)
PY

expect "an extension built for CUDA 12 beside torch's CUDA 13" 1 "needs libcudart.so.12 \(CUDA 12\)" -- \
  env PYTHONPATH="$OUT/site12:$PYTHONPATH" envdoctor check --select torch.extension_abi
saw "CUDA 13 build"
if [ -d "$OUT/site13" ]; then
  expect "the same package linked with torch's own CUDA 13 runtime" 0 "cu13-ext 1.0: import cu13ext loads" -- \
    env PYTHONPATH="$OUT/site13:$PYTHONPATH" envdoctor check --select torch.extension_abi
fi
expect "the untouched machine: the default check" 0 "HEALTHY|OK" -- envdoctor check -q
cd / && rm -rf "$OUT"
finish
