"""The README examples run as they are written: every ```python block of python/README.md and of
the repository's README.md. NumPy blocks run everywhere (CI: the host backend); PyTorch and CuPy
blocks run on the GPU machine (the CUDA build, a GPU and the framework) and skip elsewhere."""

import pathlib
import re

import pytest

import warpkv

ROOT = pathlib.Path(__file__).resolve().parents[2]
READMES = ["python/README.md", "README.md"]


def _blocks():
    for name in READMES:
        path = ROOT / name
        if not path.exists():
            continue
        for i, m in enumerate(re.finditer(r"```python\n(.*?)```", path.read_text(), re.S)):
            yield pytest.param(m.group(1), id=f"{name}#{i}")


BLOCKS = list(_blocks())


def test_the_readmes_have_python_examples():
    ids = [p.id for p in BLOCKS]
    assert any(i.startswith("python/README.md") for i in ids), ids


@pytest.mark.parametrize("code", BLOCKS)
def test_readme_example_runs(code):
    needs = [fw for fw in ("torch", "cupy") if re.search(rf"^\s*import [\w, ]*\b{fw}\b", code, re.M)]
    if needs and not warpkv.cuda_available():
        pytest.skip(f"a {'/'.join(needs)} example: needs the CUDA build and a GPU")
    for fw in needs:
        pytest.importorskip(fw)
    exec(compile(code, "<README example>", "exec"), {"__name__": "readme_example"})
