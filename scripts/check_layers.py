#!/usr/bin/env python3
"""Layering of hitmap++: a file may include headers of its own layer and of the layers below it.

Usage: check_layers.py [--root DIR] [--print]

The layers, lowest first, and the headers (under include/) and sources (src/, plugins/) of each
are listed in LAYERS. Every `#include "..."` of a header or source is resolved to a layer: an
include of a higher layer is an error (exit status 1, one line per include), and so is a file or
an included header that no layer claims, so a new header must be placed before it can be used.
--print writes the table, as docs/architecture.md draws it.
"""
import argparse
import fnmatch
import pathlib
import re
import sys

# (layer, header patterns relative to include/, source patterns relative to the root)
LAYERS = [
    ("core", ["hit/core/*"], ["src/core/*"]),
    ("shapes, tiles", ["hit/shape.hpp", "hit/tile.hpp", "hit/tile_io.hpp", "hit/resident.hpp",
                       "hit/view.hpp", "hit/detail/region.hpp",
                       "hit/sparse/csr_rows.hpp", "hit/sparse/csr_shape.hpp",
                       "hit/sparse/matrix_market.hpp", "hit/sparse/generate.hpp",
                       "hit/sparse/sparse_values.hpp"],
     ["src/shapes/*", "src/tiles/*", "src/sparse/csr_*", "src/sparse/matrix_market*",
      "src/sparse/generate*"]),
    ("topology", ["hit/topology.hpp", "hit/topology/*"], ["src/topology/*", "plugins/topologies/*"]),
    ("models", ["hit/fpm/*"], ["src/fpm/*"]),
    ("layouts", ["hit/layout.hpp", "hit/layouts/*", "hit/sparse/sparse_layout.hpp",
                 "hit/sparse/sparse_layout_svg.hpp"],
     ["src/layouts/*", "plugins/layouts/*", "src/sparse/sparse_layout*", "src/sparse/layout_*"]),
    ("partitions", ["hit/partition.hpp"], ["src/partitions/*", "plugins/partitions/*"]),
    ("comm", ["hit/comm.hpp", "hit/comm/*", "hit/sparse/sparse_halo.hpp",
              "hit/sparse/sparse_redistribute.hpp"],
     ["src/comm/*", "src/sparse/sparse_halo*", "src/sparse/sparse_redistribute*"]),
    ("devices", ["hit/device.hpp", "hit/kernel.hpp", "hit/launch.hpp", "hit/devices/*",
                 "hit/sparse/sparse_kernels.hpp"],
     ["src/devices/*", "src/sparse/sparse_kernels*"]),
    ("balance", ["hit/balance/*"], ["src/balance/*"]),
    ("packages", ["hit/work_packages.hpp"], ["src/packages/*"]),
    ("runtime", ["hit/runtime/*"], ["src/runtime/*"]),
    ("advisor", ["hit/advisor/*"], ["src/advisor/*"]),
    ("everything", ["hit/hit.hpp", "hit/program.hpp"], []),
]
INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+)"', re.M)


def layer_of_header(name):
    # A header named exactly wins over a folder pattern of another layer.
    for i, (_, headers, _) in enumerate(LAYERS):
        if name in headers:
            return i
    for i, (_, headers, _) in enumerate(LAYERS):
        if any(fnmatch.fnmatch(name, p) for p in headers):
            return i
    return None


def layer_of_source(rel):
    for i, (_, _, sources) in enumerate(LAYERS):
        if any(fnmatch.fnmatch(rel, p) for p in sources):
            return i
    return None


def resolve(root, including, name):
    """The layer of what `including` (a path relative to root) names by `name`."""
    if name.startswith("hit/"):
        return layer_of_header(name), f"include/{name}"
    # A private header: beside the including file, or relative to src/ or plugins/.
    for base in (pathlib.Path(including).parent, pathlib.Path("src"), pathlib.Path("plugins")):
        candidate = (base / name).as_posix()
        if (root / candidate).is_file():
            return layer_of_source(candidate), candidate
    return None, name


def incomplete_umbrella(root):
    """hit/hit.hpp includes every public header: those under include/hit/ outside detail/ (the
    internals come with the headers that need them; a header no program may include lives under
    src/, where it is not installed)."""
    umbrella = root / "include" / "hit" / "hit.hpp"
    if not umbrella.is_file():
        return ["include/hit/hit.hpp: missing (the one include of the public API)"]
    named = set(INCLUDE.findall(umbrella.read_text(errors="replace")))
    public = sorted(p.relative_to(root / "include").as_posix()
                    for p in (root / "include" / "hit").rglob("*.hpp")
                    if p != umbrella and "detail" not in p.relative_to(root / "include").parts)
    return [f"include/hit/hit.hpp: does not include {h} (a public header: include it, or move it "
            f"under src/ if no program may use it)" for h in public if h not in named]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--root", default=str(pathlib.Path(__file__).resolve().parents[1]))
    ap.add_argument("--print", action="store_true", help="print the layers, lowest first")
    args = ap.parse_args()
    root = pathlib.Path(args.root)
    if args.print:
        for name, headers, sources in LAYERS:
            print(f"{name}: {', '.join(headers)} | {', '.join(sources) or '-'}")
        return 0
    errors = []
    files = [p for folder in ("include", "src", "plugins") for p in (root / folder).rglob("*")
             if p.is_file() and p.suffix in {".hpp", ".cpp", ".cu", ".cuh", ".h"}]
    for path in sorted(files):
        rel = path.relative_to(root).as_posix()
        own = (layer_of_header(rel[len("include/"):]) if rel.startswith("include/")
               else layer_of_source(rel))
        if own is None:
            errors.append(f"{rel}: belongs to no layer (add it to LAYERS in {pathlib.Path(__file__).name})")
            continue
        for m in INCLUDE.finditer(path.read_text(errors="replace")):
            layer, target = resolve(root, rel, m.group(1))
            line = path.read_text(errors="replace").count("\n", 0, m.start()) + 1
            if layer is None:
                errors.append(f"{rel}:{line}: includes {m.group(1)}, which belongs to no layer")
            elif layer > own:
                errors.append(f"{rel}:{line}: layer '{LAYERS[own][0]}' includes {target} of the "
                              f"higher layer '{LAYERS[layer][0]}'")
    errors += incomplete_umbrella(root)
    for e in errors:
        print(e)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
