"""HIPS autograd's tests vendored here run against numgrad through two adapters:
`hips_numpy` (plays ``autograd.numpy``) and `hips_test_util` (``check_grads`` on
`numgrad.gradcheck`). They compile many kernel structures, so they carry the ``slow``
marker (`pyproject.toml`): README's test command leaves them out, ``.ci/run`` runs them
with ``-m slow``."""
