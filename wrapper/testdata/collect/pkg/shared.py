class Shared:
    def test_shared(self):
        pass
