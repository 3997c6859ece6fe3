"""Images the model can look at: charts, image files and what the user attaches.

They come from notebook outputs, kernel displays, image files and attachments. An image is prepared once, when a tool or an attachment first meets it (``prepare``: decoded,
downscaled to the configured longest side and re-encoded with Pillow, SVG rasterized with resvg), and
kept on its message as it will be sent, so later requests carry the same bytes. Beside it always goes
a caption (where it came from, its type and pixel size), which is all a model that cannot see gets.
Which images a request carries is decided at request time (``window``): the newest few, and none for
a blind model.
"""

from .image import Image, estimate_tokens
from .prepare import ImageError, prepare
from .sink import ImageSink

__all__ = ["Image", "ImageError", "ImageSink", "estimate_tokens", "prepare"]
