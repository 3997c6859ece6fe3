import re


def minutes(text):
    """"1h30m" -> 90, "45m" -> 45, "2h" -> 120."""
    hours = re.search(r"(\d+)h", text)
    mins = re.search(r"(\d+)m", text)
    return (int(hours.group(1)) * 60 if hours else 0) + (int(mins.group(1)) if mins else 0)
