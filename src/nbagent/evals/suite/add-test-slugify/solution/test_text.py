from text import slugify


def test_words_are_joined_by_dashes():
    assert slugify("Hello, World!") == "hello-world"


def test_empty():
    assert slugify("") == ""
