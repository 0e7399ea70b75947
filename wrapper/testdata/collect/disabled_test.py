__test__ = False


def test_module_disabled():
    pass
