"""numgrad's NumPy front end: one module per family of NumPy's functions.

The functions here are the implementation: each takes tensors and array-likes, and
Tensor's methods are bound to them by one table (`numgrad.methods`), so ``x.exp()`` is
``ng.exp(x)``. ``import numgrad`` re-exports them (``ng.exp``, ``ng.sum``, ...), as
``jax.numpy`` re-exports ``jax/_src/numpy/``. This package imports nothing itself:
`numgrad.tensor_base` reaches `dispatch` while the Tensor class is still being built.

- `elementwise`: the primitive table's elementwise functions, `where`, `power`, `clip`
  and the composites built from them
- `reductions`: sums, products, extremes, means and spreads, and their NaN-skipping forms
- `shaping`: one tensor's shape and order of axes and elements
- `joining` and `assembly`: tensors joined, split and built from others
- `indexing`: NumPy's functions that read or write elements by index
- `ordering`: scans, differences, sorting and partitioning
- `searching`: positions, sets, histograms and interpolation
- `statistics`: quantiles, averages, covariance
- `sampled`: sampled data (gradient, trapezoid, convolve)
- `creation`: tensors from data, constants and ranges
- `standard`: the Array API standard's names
- `dispatch`: NumPy's own functions called on tensors (NEP 13 and NEP 18)
"""
