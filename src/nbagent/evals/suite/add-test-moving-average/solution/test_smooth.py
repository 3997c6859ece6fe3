from smooth import moving_average


def test_windows_of_two():
    assert moving_average([1, 2, 3, 4], 2) == [1.5, 2.5, 3.5]


def test_one_window():
    assert moving_average([2, 4], 2) == [3.0]
