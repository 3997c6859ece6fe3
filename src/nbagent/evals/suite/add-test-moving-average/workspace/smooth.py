def moving_average(values, window):
    """The mean of each run of ``window`` consecutive values."""
    return [sum(values[i:i + window]) / window for i in range(len(values) - window + 1)]
