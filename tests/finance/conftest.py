from tests.finance.fx_helpers import ecb  # noqa: F401  (fixture)
