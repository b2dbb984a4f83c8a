#!/usr/bin/env python3
"""Writes a deterministic source tree for bench/search.sh.

    bench/gen_tree.py DIR [FILES]

FILES (default 100000) source files in DIR/crate_XX/mod_YY/, each 20-200
lines of code-like text from a fixed seed, so every run writes the same
bytes. DIR is a git repository (a bare `.git` directory is enough for the
ignore rules) whose `.gitignore` excludes `target/`, which holds 5% extra
files that every tool must skip. A few hidden files sit under `.github/`.
"""

import os
import random
import sys

WORDS = (
    "let mut self value result config state buffer index count error path "
    "name len iter map filter collect into clone unwrap expect match Some "
    "None Ok Err return if else for while loop break continue impl trait "
    "struct enum pub fn use mod const static async await move ref where"
).split()

TEMPLATES = [
    "    let {a} = {b}.{c}({d});",
    "    if {a}.{b}() {{ return {c}; }}",
    "    // {a} {b} {c} {d} {e}",
    "    {a}.{b}({c}, {d});",
    "pub fn {a}_{b}({c}: &{d}) -> {e} {{",
    "}}",
    "impl {A} for {B} {{",
    "    match {a} {{ {B}(x) => x, _ => {c} }}",
    "fn main() {{",
    "    unsafe impl Send for {A}{B} {{}}",
]
WEIGHTS = [30, 15, 15, 20, 8, 10, 3, 4, 0.3, 0.4]


def line(rng):
    template = rng.choices(TEMPLATES, WEIGHTS)[0]
    w = {k: rng.choice(WORDS) for k in "abcde"}
    w.update({k.upper(): rng.choice(WORDS).capitalize() for k in "ab"})
    return template.format(**w)


def write_file(path, rng):
    n = rng.randint(20, 200)
    with open(path, "w") as f:
        f.write("\n".join(line(rng) for _ in range(n)))
        f.write("\n")


def main():
    root = sys.argv[1]
    files = int(sys.argv[2]) if len(sys.argv) > 2 else 100_000
    rng = random.Random(20261122)
    os.makedirs(os.path.join(root, ".git"), exist_ok=True)
    with open(os.path.join(root, ".gitignore"), "w") as f:
        f.write("target/\n")
    per_dir = 100
    exts = [".rs"] * 6 + [".ts", ".py", ".md", ".toml"]
    for i in range(files):
        d = os.path.join(root, f"crate_{i // (per_dir * 50):02}", f"mod_{(i // per_dir) % 50:02}")
        os.makedirs(d, exist_ok=True)
        write_file(os.path.join(d, f"file_{i % per_dir:03}{rng.choice(exts)}"), rng)
    for i in range(files // 20):
        d = os.path.join(root, "target", "debug", f"build_{i // per_dir:03}")
        os.makedirs(d, exist_ok=True)
        write_file(os.path.join(d, f"gen_{i % per_dir:03}.rs"), rng)
    os.makedirs(os.path.join(root, ".github", "workflows"), exist_ok=True)
    for i in range(10):
        write_file(os.path.join(root, ".github", "workflows", f"ci_{i}.rs"), rng)


if __name__ == "__main__":
    main()
