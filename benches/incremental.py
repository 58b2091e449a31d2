#!/usr/bin/env python3
"""Cost in proportion to the change: andon on a monorepo assembled from the corpora, on django's
package alone, on generated Python repositories of growing size, and a warm `andon loop`.

Usage: benches/incremental.py [--andon BIN] [--corpora DIR] [--work DIR] [--runs N]
                              [--sizes 5000,50000,200000] [--only mono,django,gen,loop]

  --corpora  where benches/corpora.sh fetched the corpora (default: $ANDON_CORPUS_DIR, else
             <repo>/target/bench-corpora); run benches/corpora.sh first
  --work     scratch directory (default <repo>/target/bench-work/incremental); everything andon
             writes goes there, never into the corpora

The monorepo is django's whole sdist, effect's and rxjs's package.json and src/, and the vendored
tokio/serde/clap crates, side by side (about 5,600 source files). Every figure is the median of
--runs whole `andon` processes, with the peak RSS of the median run (/usr/bin/time -f %M):
  one-file edit   a comment line appended to one Python file, then `andon index DIR --quiet`
                  (and again with a new function appended: a change resolution sees)
  no change       `andon index DIR --quiet` again
  new .txt        a new notes file in a package directory, then `andon index DIR --quiet`
  query           `andon query 'Wire(p, c), Stage(c, r)' --no-index --format csv`
The generated repositories are Python packages of 50 modules each, every module importing two of
its package and one of another package. For them the table adds cold indexing, and the growth of
(one-file edit - no change) from the smallest size to each larger one, which should stay within
2x from 5,000 to 50,000 files. The loop figure is a second `andon loop` on a git copy of the
vendored crates after a first one ran (nothing changed).
"""

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def run_timed(cmd, cwd):
    """(seconds, peak RSS in MiB) of one process; exits on failure."""
    timed = ["/usr/bin/time", "-f", "%M"] if Path("/usr/bin/time").exists() else []
    t = time.perf_counter()
    p = subprocess.run(timed + cmd, cwd=cwd, capture_output=True, text=True)
    dt = time.perf_counter() - t
    if p.returncode not in (0, 1):
        sys.exit(f"{' '.join(cmd)} in {cwd}: exit {p.returncode}\n{p.stderr[-2000:]}")
    rss = None
    if timed:
        last = p.stderr.strip().splitlines()[-1:] or ["0"]
        rss = int(last[0]) / 1024 if last[0].isdigit() else None
    return dt, rss


def median_of(runs, prepare, cmd, cwd):
    """Median seconds and the peak RSS of the median run, over `runs` runs, `prepare()` untimed
    before each."""
    samples = []
    for i in range(runs):
        prepare(i)
        samples.append(run_timed(cmd, cwd))
    samples.sort(key=lambda s: s[0])
    return samples[len(samples) // 2]


def ms(s):
    return f"{s * 1000:,.0f} ms"


def mib(r):
    return "" if r is None else f"{r:,.0f} MiB"


class Bench:
    def __init__(self, andon, runs):
        self.andon, self.runs, self.rows = andon, runs, []

    def index(self, d):
        return [self.andon, "index", str(d), "--quiet"]

    def row(self, label, sample):
        self.rows.append((label, sample))
        print(f"  {label:<48} {ms(sample[0]):>10} {mib(sample[1]):>10}", flush=True)

    def edits(self, name, d, py_file, pkg_dir, query=True):
        """One-file edit, no change, new .txt (and the query) on the indexed repository `d`."""
        nothing = lambda i: None

        def append(i):
            with open(py_file, "a") as f:
                f.write(f"# andon bench edit {time.time_ns()}\n")

        def define(i):
            with open(py_file, "a") as f:
                f.write(f"\n\ndef andon_bench_{time.time_ns()}():\n    return 1\n")

        def new_txt(i):
            (pkg_dir / f"andon-bench-notes-{time.time_ns()}.txt").write_text("notes\n")

        self.row(f"{name}: one-file edit", median_of(self.runs, append, self.index(d), d))
        self.row(f"{name}: one-file edit, a new definition", median_of(self.runs, define, self.index(d), d))
        self.row(f"{name}: no change", median_of(self.runs, nothing, self.index(d), d))
        self.row(f"{name}: new .txt in a package", median_of(self.runs, new_txt, self.index(d), d))
        if query:
            q = [self.andon, "query", "Wire(p, c), Stage(c, r)", "--no-index", "--format", "csv"]
            self.row(f"{name}: query Wire/Stage --no-index", median_of(self.runs, nothing, q, d))


def copy_tree(src, dst):
    if not src.exists():
        sys.exit(f"{src}: missing; run benches/corpora.sh first")
    shutil.copytree(src, dst, symlinks=True)


def monorepo(corpora, work):
    d = work / "mono"
    if not d.exists():
        tmp = work / "mono.partial"
        shutil.rmtree(tmp, ignore_errors=True)
        tmp.mkdir(parents=True)
        copy_tree(corpora / "django", tmp / "django")
        for pkg in ["effect", "rxjs"]:
            (tmp / pkg).mkdir()
            shutil.copy(corpora / pkg / "package.json", tmp / pkg / "package.json")
            copy_tree(corpora / pkg / "src", tmp / pkg / "src")
        copy_tree(corpora / "rust-vendor", tmp / "rust-vendor")
        tmp.rename(d)
    return d


def generated(work, n):
    """A Python repository of `n` modules: packages of 50, each module importing two modules of
    its package and one of the next package."""
    d = work / f"gen-{n}"
    if d.exists():
        return d
    tmp = work / f"gen-{n}.partial"
    shutil.rmtree(tmp, ignore_errors=True)
    per = 50
    packages = max(1, n // per)
    for p in range(packages):
        pkg = tmp / f"pkg{p}"
        pkg.mkdir(parents=True)
        (pkg / "__init__.py").write_text("")
        for m in range(per - 1):
            a, b, other = (m + 1) % (per - 1), (m + 2) % (per - 1), (p + 1) % packages
            (pkg / f"mod{m}.py").write_text(
                f"from pkg{p} import mod{a}\nfrom pkg{p}.mod{b} import f{b}\nimport pkg{other}.mod{m}\n\n\n"
                f"def f{m}(x):\n    return mod{a}.f{a}(x) + f{b}(x) + pkg{other}.mod{m}.f{m}(x)\n"
            )
    tmp.rename(d)
    return d


def git_copy(src, dst):
    shutil.rmtree(dst, ignore_errors=True)
    copy_tree(src, dst)
    env = dict(os.environ, GIT_AUTHOR_NAME="bench", GIT_AUTHOR_EMAIL="bench@example.invalid",
               GIT_COMMITTER_NAME="bench", GIT_COMMITTER_EMAIL="bench@example.invalid")
    for cmd in (["git", "init", "-q"], ["git", "add", "-A"], ["git", "commit", "-qm", "corpus"]):
        subprocess.run(cmd, cwd=dst, check=True, env=env, capture_output=True)
    return dst


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--andon", default=str(ROOT / os.environ.get("CARGO_TARGET_DIR", "target") / "release/andon"))
    ap.add_argument("--corpora", default=os.environ.get("ANDON_CORPUS_DIR", str(ROOT / "target/bench-corpora")))
    ap.add_argument("--work", default=str(ROOT / "target/bench-work/incremental"))
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--sizes", default="5000,50000,200000")
    ap.add_argument("--only", default="mono,django,gen,loop")
    a = ap.parse_args()
    corpora, work = Path(a.corpora).resolve(), Path(a.work).resolve()
    work.mkdir(parents=True, exist_ok=True)
    only = set(a.only.split(","))
    b = Bench(str(Path(a.andon).resolve()), a.runs)
    print(f"andon: {b.andon}\nmedians of {a.runs} runs; peak RSS of the median run")
    if "mono" in only:
        d = monorepo(corpora, work)
        b.row("monorepo: cold", run_timed(b.index(d) + ["--rebuild"], d))
        b.edits("monorepo", d, d / "django/django/db/models/base.py", d / "django/django/db")
    if "django" in only:
        d = work / "django-package"
        if not d.exists():
            copy_tree(corpora / "django/django", d)
        run_timed(b.index(d), d)
        b.edits("django package", d, d / "db/models/base.py", d / "db", query=False)
    if "gen" in only:
        growth = {}
        for n in [int(s) for s in a.sizes.split(",")]:
            d = generated(work, n)
            b.row(f"generated {n:,}: cold", run_timed(b.index(d) + ["--rebuild"], d))
            b.edits(f"generated {n:,}", d, d / "pkg0/mod0.py", d / "pkg0", query=False)
            rows = dict(b.rows)
            growth[n] = rows[f"generated {n:,}: one-file edit"][0] - rows[f"generated {n:,}: no change"][0]
        sizes = sorted(growth)
        for n in sizes[1:]:
            print(f"  (one-file - no change) at {n:,} / at {sizes[0]:,}: {growth[n] / max(growth[sizes[0]], 1e-6):.2f}x")
    if "loop" in only:
        d = git_copy(corpora / "rust-vendor", work / "loop-vendor")
        run_timed([b.andon, "loop", "--quiet"], d)
        b.row("vendored crates: second andon loop", median_of(a.runs, lambda i: None, [b.andon, "loop", "--quiet"], d))


if __name__ == "__main__":
    main()
