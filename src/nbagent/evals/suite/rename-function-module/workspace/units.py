def conv(celsius):
    """Celsius to Fahrenheit."""
    return celsius * 9 / 5 + 32
