import slugger


def test_slug():
    assert slugger.slug("Hello Big World") == "hello-big-world"


def test_slug_single():
    assert slugger.slug("One") == "one"
