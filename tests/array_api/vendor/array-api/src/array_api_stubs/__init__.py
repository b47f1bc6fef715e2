"""Function stubs and API documentation for the array API standard.

Vendored for numgrad: only the 2024.12 stubs are here, and (unlike upstream's) this file
imports none of the versions; array_api_tests/stubs.py imports the modules it reads.
"""
