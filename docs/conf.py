"""Sphinx configuration: the guide (reStructuredText), design notes (Markdown via
myst-parser) and the API reference from numgrad's NumPy-style docstrings.

Build: ``sphinx-build -W -b html docs docs/_build/html``; run every example:
``sphinx-build -W -b doctest docs docs/_build/doctest``.
"""

import os
import sys

sys.path.insert(0, os.path.abspath(".."))
# The examples show compiled kernels, their caching and their counts: one tier, as the
# test suite pins it (numgrad's default interprets a kernel until a worker process has
# compiled it, so those outputs would depend on timing).
os.environ.setdefault("NUMGRAD_CPU_KERNELS", "numba")

import numgrad  # noqa: E402

project = "numgrad"
author = "the numgrad developers"
copyright = "the numgrad developers"
release = version = numgrad.__version__

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.doctest",
    "sphinx.ext.napoleon",  # reads the NumPy-style (numpydoc) docstrings
    "sphinx.ext.viewcode",
    "myst_parser",
]
source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
exclude_patterns = ["_build"]
root_doc = "index"

html_theme = "furo"
html_title = f"numgrad {release}"
html_static_path = ["_static"]

autodoc_member_order = "bysource"
autodoc_typehints = "none"  # the docstrings' Parameters sections say it in words
napoleon_google_docstring = False
napoleon_numpy_docstring = True
napoleon_use_rtype = False

myst_heading_anchors = 3

# Every example in the guide and in the docstrings is run by `-b doctest`.
doctest_global_setup = """
import numpy as np
import numgrad as ng
"""
doctest_default_flags = (
    __import__("doctest").ELLIPSIS | __import__("doctest").NORMALIZE_WHITESPACE
    | __import__("doctest").DONT_ACCEPT_TRUE_FOR_1
)
