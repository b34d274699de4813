#!/usr/bin/env python3
"""The structure checks fail when they should: on a scratch tree, check_layers.py must refuse an
include of a higher layer, a header no layer claims and a public header hit/hit.hpp leaves out, and check_structure.py a function over
100 lines, a file over 600 lines and raw MPI or a rank test in an example's algorithm file; both pass the tree once the offence is removed.

Usage: structure_checks_selftest.py SOURCE_DIR WORK_DIR
"""
import pathlib
import shutil
import subprocess
import sys

source, work = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
failures = []


def write(path, text):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def run(script):
    r = subprocess.run([sys.executable, str(source / "scripts" / script), "--root", str(work)],
                       capture_output=True, text=True)
    return r.returncode, r.stdout + r.stderr


def expect(cond, what, out=""):
    if not cond:
        failures.append(f"{what}\n{out}")


shutil.rmtree(work, ignore_errors=True)
# Layers: the models layer (hit/fpm) including the comm layer is upward.
write(work / "include/hit/core/error.hpp", "#pragma once\n")
write(work / "include/hit/comm.hpp", '#pragma once\n#include "hit/core/error.hpp"\n')
write(work / "include/hit/fpm/model.hpp", '#pragma once\n#include "hit/core/error.hpp"\n')
write(work / "src/fpm/model.cpp", '#include "hit/fpm/model.hpp"\n')
umbrella = ('#pragma once\n#include "hit/comm.hpp"\n#include "hit/core/error.hpp"\n'
            '#include "hit/fpm/model.hpp"\n')
write(work / "include/hit/hit.hpp", umbrella)
rc, out = run("check_layers.py")
expect(rc == 0, "layers: a tree that only includes downwards was refused", out)

write(work / "src/fpm/model.cpp", '#include "hit/fpm/model.hpp"\n#include "hit/comm.hpp"\n')
rc, out = run("check_layers.py")
expect(rc == 1 and "src/fpm/model.cpp:2" in out and "'comm'" in out,
       "layers: an include of the comm layer from the models layer was not refused", out)

write(work / "src/fpm/model.cpp", '#include "hit/fpm/model.hpp"\n')
write(work / "include/hit/unplaced.hpp", "#pragma once\n")
rc, out = run("check_layers.py")
expect(rc == 1 and "include/hit/unplaced.hpp: belongs to no layer" in out,
       "layers: a header of no layer was not refused", out)
(work / "include/hit/unplaced.hpp").unlink()

write(work / "include/hit/fpm/extra.hpp", '#pragma once\n#include "hit/core/error.hpp"\n')
rc, out = run("check_layers.py")
expect(rc == 1 and "does not include hit/fpm/extra.hpp" in out,
       "layers: a public header missing from hit/hit.hpp was not refused", out)
write(work / "include/hit/hit.hpp", umbrella + '#include "hit/fpm/extra.hpp"\n')
rc, out = run("check_layers.py")
expect(rc == 0, "layers: a complete hit/hit.hpp was refused", out)

# Lengths: a 101-line function, then a 601-line file.
body = "".join(f"  x += {i};\n" for i in range(99))
write(work / "src/fpm/long.cpp", "int long_one(int x) {\n" + body + "  return x;\n}\n")
rc, out = run("check_structure.py")
expect(rc == 1 and "long_one is 102 lines" in out, "lengths: a 102-line function passed", out)

write(work / "src/fpm/long.cpp", "int short_one(int x) {\n" + body[:-len("  x += 98;\n") * 5] +
      "  return x;\n}\n// a brace in a comment { is not code\n")
rc, out = run("check_structure.py")
expect(rc == 0, "lengths: a short function was refused", out)

write(work / "src/fpm/long.cpp", "".join(f"int f{i}() {{ return {i}; }}\n" for i in range(601)))
rc, out = run("check_structure.py")
expect(rc == 1 and "src/fpm/long.cpp: 601 lines" in out, "lengths: a 601-line file passed", out)

(work / "src/fpm/long.cpp").unlink()

# The global view: raw MPI, then a test of the process's rank, in an algorithm file are refused;
# the same words in a comment or a string, and a Shape's rank(), are not.
algorithm = work / "examples/heat/heat.cpp"
write(algorithm, "int sweep(const Shape& s) {\n  // MPI_Allreduce is named in a comment\n"
      '  const char* m = "env.rank() in a string";\n  return s.rank();\n}\n')
rc, out = run("check_structure.py")
expect(rc == 0, "global view: a comment, a string or a Shape's rank() was refused", out)
write(algorithm, "double total(double x) {\n  MPI_Allreduce(MPI_IN_PLACE, &x, 1, MPI_DOUBLE, "
      "MPI_SUM, MPI_COMM_WORLD);\n  return x;\n}\n")
rc, out = run("check_structure.py")
expect(rc == 1 and "examples/heat/heat.cpp:2: 'MPI_Allreduce'" in out,
       "global view: raw MPI in an algorithm file passed", out)
write(algorithm, "void report(Environment& env) {\n  if (env.rank() == 0) print();\n}\n")
rc, out = run("check_structure.py")
expect(rc == 1 and "examples/heat/heat.cpp:2: 'env.rank()'" in out,
       "global view: a rank test in an algorithm file passed", out)

if failures:
    print("\n".join(failures))
    sys.exit(1)
print("structure checks: refuse an upward include, an unplaced header, an incomplete hit.hpp, a long "
      "function, a long file, raw MPI or a rank test in an algorithm file")
