"""HIPS autograd's tests vendored here run against numgrad through two adapters:
`hips_numpy` (plays ``autograd.numpy``) and `hips_test_util` (``check_grads`` on
`numgrad.gradcheck`). They compile many kernel structures, so they carry the ``slow``
marker: ``pytest -m "not slow"`` leaves them out."""


def pytest_configure(config):
    config.addinivalue_line("markers", "slow: many kernel structures to compile (minutes)")
