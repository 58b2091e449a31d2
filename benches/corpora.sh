#!/usr/bin/env bash
# Fetch real-world benchmark corpora through the package registries (PyPI, crates.io, npm).
# Usage: benches/corpora.sh [DIR]   (default: $ANDON_CORPUS_DIR, else <repo>/target/bench-corpora)
# Idempotent: what is already there is kept. Never commit what it fetches.
# Needs: pip, cargo, npm, tar, network access to PyPI, crates.io and npm.
# The Rust corpus is pinned by rust-corpus.Cargo.lock, next to this script.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
DIR=${1:-${ANDON_CORPUS_DIR:-$HERE/../target/bench-corpora}}
mkdir -p "$DIR/dl" && DIR=$(cd "$DIR" && pwd)

DJANGO=5.2.19        # Python: ~2,800 .py files, ~18 MB (whole sdist), django/ alone ~885 files
EFFECT=4.1.0         # TypeScript: 572 .ts files in src/, ~21 MB
RXJS=7.8.2           # TypeScript: 251 .ts files in src/, ~0.8 MB

# Python: django sdist
if [ ! -d "$DIR/django" ]; then
  (cd "$DIR/dl" && pip download -q --no-binary :all: --no-deps "django==$DJANGO" -d .)
  mkdir -p "$DIR/django" && tar xzf "$DIR/dl/django-$DJANGO.tar.gz" -C "$DIR/django" --strip-components=1
fi

# Rust: 42 crates vendored from a project depending on tokio (full) + serde (derive) + clap (derive),
# pinned by rust-corpus.Cargo.lock; ~2,000 .rs files, ~35 MB (half of it windows-sys bindings).
if [ ! -d "$DIR/rust-vendor" ]; then
  mkdir -p "$DIR/dl/rsproj/src"
  cat > "$DIR/dl/rsproj/Cargo.toml" <<'TOML'
[package]
name = "dummy"
version = "0.1.0"
edition = "2024"

[dependencies]
clap = { version = "4.6.9", features = ["derive"] }
serde = { version = "1.0.229", features = ["derive"] }
tokio = { version = "1.54.1", features = ["full"] }

# Its own workspace: never joined to a Cargo workspace above the corpus directory.
[workspace]
TOML
  echo 'fn main() {}' > "$DIR/dl/rsproj/src/main.rs"
  cp "$HERE/rust-corpus.Cargo.lock" "$DIR/dl/rsproj/Cargo.lock"
  rm -rf "$DIR/rust-vendor.partial"
  (cd "$DIR/dl/rsproj" && cargo vendor --locked -q "$DIR/rust-vendor.partial" > /dev/null)
  mv "$DIR/rust-vendor.partial" "$DIR/rust-vendor"
fi

# TypeScript: npm packages that ship their .ts sources
for spec in "effect@$EFFECT" "rxjs@$RXJS"; do
  name=${spec%@*}
  if [ ! -d "$DIR/$name" ]; then
    (cd "$DIR/dl" && npm pack "$spec" --silent > /dev/null)
    mkdir -p "$DIR/$name.partial" && tar xzf "$DIR/dl/$name-${spec#*@}.tgz" -C "$DIR/$name.partial" --strip-components=1
    mv "$DIR/$name.partial" "$DIR/$name"
  fi
done

printf '%-14s %7s %10s\n' corpus files bytes
for c in django django/django rust-vendor effect/src rxjs/src; do
  n=$(find "$DIR/$c" -type f \( -name '*.py' -o -name '*.rs' -o -name '*.ts' \) | wc -l)
  b=$(find "$DIR/$c" -type f \( -name '*.py' -o -name '*.rs' -o -name '*.ts' \) -print0 | xargs -0 cat | wc -c)
  printf '%-14s %7s %10s\n' "$c" "$n" "$b"
done
echo "corpora in $DIR"
