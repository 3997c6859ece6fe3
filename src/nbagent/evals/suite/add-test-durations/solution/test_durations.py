from durations import minutes


def test_hours_and_minutes():
    assert minutes("1h30m") == 90


def test_minutes_only():
    assert minutes("45m") == 45
