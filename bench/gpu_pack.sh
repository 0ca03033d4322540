#!/usr/bin/env bash
# Pack what bench/gpu_check.py needs for a lent GPU machine (docs/performance.md, "On a GPU").
#
# Why: that machine has no package index and takes at most 64 MiB per call. Its image has torch (CUDA 13),
# transformers, numpy, httpx and tqdm, but not the packages below, and the default GGUF alone is 98 MB.
# So the missing packages go as one tarball (bitsandbytes cut to its CUDA 13 and CPU libraries,
# pyspellchecker to its English list, shared libraries stripped: ~17 MB) and the GGUF in two parts, each
# small enough to travel beside the ~3 MB working tree. Versions are the ones in this checkout's .venv.
#
#   bash bench/gpu_pack.sh [OUT]      # OUT defaults to .dev (ignore it: echo /.dev/ >> .git/info/exclude)
set -euo pipefail
out=${1:-.dev}
py=${PY:-.venv/bin/python}
pkgs="bitsandbytes gguf platformdirs pyspellchecker spacy thinc blis cymem murmurhash preshed srsly wasabi
      catalogue confection weasel pydantic pydantic_core cloudpathlib smart_open spacy-legacy spacy-loggers
      annotated-types typing-inspection"
rm -rf "$out/whl" "$out/site" && mkdir -p "$out/whl" "$out/site"
for p in $pkgs; do
  v=$("$py" -c "import importlib.metadata as m, sys; print(m.version(sys.argv[1]))" "$p")
  "$py" -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
    --platform manylinux_2_28_x86_64 --platform manylinux_2_27_x86_64 --platform manylinux_2_24_x86_64 \
    --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 --platform manylinux1_x86_64 \
    --platform any -d "$out/whl" "$p==$v"
done
for w in "$out"/whl/*.whl; do unzip -q -o "$w" -d "$out/site"; done
find "$out/site/bitsandbytes" -name 'libbitsandbytes_*.so' ! -name '*cuda130*' ! -name '*_cpu*' -delete
find "$out/site/spellchecker/resources" -type f ! -name 'en*' -delete
rm -rf "$out/site/spacy/tests" "$out/site/thinc/tests"
find "$out/site" -name '*.so' -exec strip --strip-unneeded {} +
tar cJf "$out/site.tar.xz" -C "$out" site
gguf=$("$py" -c "from ragsec_core.models.llm import default_gguf_path; print(default_gguf_path())")
head -c 40000000 "$gguf" > "$out/gguf.a"
tail -c +40000001 "$gguf" > "$out/gguf.b"
cat "$out/gguf.a" "$out/gguf.b" | cmp - "$gguf"
ls -la "$out"/site.tar.xz "$out"/gguf.a "$out"/gguf.b
