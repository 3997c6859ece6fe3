"""Images prepared once: downscaled, re-encoded (or kept), SVG drawn without reading local files;
the window of images a request carries; the token estimate."""

from __future__ import annotations

import base64
import io

import pytest
from PIL import Image as PILImage

from nbagent.images import ImageError, ImageSink, estimate_tokens, prepare
from nbagent.images.window import carried_tokens, windowed

from .pictures import encoded, png


def _open(image) -> PILImage.Image:
    return PILImage.open(io.BytesIO(base64.b64decode(image.data)))


def test_a_large_png_is_downscaled_once_to_the_longest_side():
    raw = png(3000, 1500)
    image, source = prepare(raw, "image/png", "c", max_side=1024)
    assert (image.width, image.height) == (1000, 500) and image.mime == "image/png"  # a third: reduce(3)
    assert _open(image).size == (1000, 500)
    assert (source.width, source.height, source.size) == (3000, 1500, len(raw))
    resampled, _ = prepare(png(1500, 750), "image/png", "c", max_side=1024)
    assert (resampled.width, resampled.height) == (1024, 512)  # a half (750 px) would lose too much
    again, _ = prepare(raw, "image/png", "c", max_side=1024)
    assert again.data == image.data  # the same bytes every time: requests stay identical


def test_a_small_png_or_jpeg_is_sent_as_it_is():
    raw = png(800, 600)
    image, _ = prepare(raw, "image/png", "c", max_side=1024)
    assert base64.b64decode(image.data) == raw
    jpeg = encoded("JPEG", 640, 480)
    image, _ = prepare(jpeg, "image/jpeg", "c", max_side=1024)
    assert base64.b64decode(image.data) == jpeg and image.mime == "image/jpeg"


def test_a_large_jpeg_stays_jpeg_and_gif_webp_become_png():
    image, _ = prepare(encoded("JPEG", 4000, 3000), "image/jpeg", "c", max_side=1024)
    assert image.mime == "image/jpeg" and (image.width, image.height) == (1000, 750)  # drafted at 1/2, then halved
    assert _open(image).format == "JPEG"
    for fmt, mode in (("GIF", "P"), ("WEBP", "RGB")):
        image, source = prepare(encoded(fmt, 300, 200, mode), f"image/{fmt.lower()}", "c", max_side=1024)
        assert image.mime == "image/png" and _open(image).format == "PNG" and (image.width, image.height) == (300, 200)
        assert source.mime == f"image/{fmt.lower()}"


def test_what_is_not_an_image_is_refused_with_a_reason():
    with pytest.raises(ImageError):
        prepare(b"not an image at all", "image/png", "c")
    sink = ImageSink()
    line = sink.add_bytes(b"\x89PNG broken", "image/png", "plot.png")
    assert "plot.png" in line and "not a readable image" in line and sink.images == []


SVG = ('<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" width="2400pt" '
       'height="1200pt"><rect width="100%" height="100%" fill="red"/>'
       '<image xlink:href="/etc/secret.png" width="10" height="10"/></svg>')


def test_svg_is_rasterized_to_the_longest_side_without_its_file_references(monkeypatch):
    import resvg_py

    seen = []
    real = resvg_py.svg_to_bytes
    monkeypatch.setattr(resvg_py, "svg_to_bytes", lambda **kw: seen.append(kw["svg_string"]) or real(**kw))
    image, source = prepare(SVG.encode(), "image/svg+xml", "c", max_side=1024)
    assert image.mime == "image/png" and max(image.width, image.height) == 1024
    assert (source.width, source.height) == (3200, 1600)  # points are 4/3 of a pixel
    assert "/etc/secret.png" not in seen[0]
    assert _open(image).getpixel((10, 10))[:3] == (255, 0, 0)


def test_a_small_svg_also_goes_as_text_for_a_model_that_cannot_see():
    sink = ImageSink()
    small = '<svg xmlns="http://www.w3.org/2000/svg" width="20" height="10"><rect width="5" height="5"/></svg>'
    line = sink.add_output("image/svg+xml", small, "cell a output 1")
    assert line.startswith("[image 1: cell a output 1: image/svg+xml 20x10]") and small in line
    assert len(sink.images) == 1


def test_a_call_attaches_at_most_its_limit_and_says_so():
    sink = ImageSink(limit=2)
    lines = [sink.add_bytes(png(100, 100), "image/png", f"p{i}.png") for i in range(3)]
    assert [len(sink.images), lines[0].startswith("[image 1: p0.png: image/png 100x100")] == [2, True]
    assert "not attached: this call already has 2" in lines[2]


def test_token_estimate_follows_the_documented_tiles():
    assert estimate_tokens(1024, 768) == 765  # 2x2 tiles
    assert estimate_tokens(512, 512) == 255
    assert estimate_tokens(4096, 4096) == 85 + 170 * 4  # to 2048, then to 768: 2x2 tiles


def _img(n: int) -> dict:
    return {"mime": "image/png", "data": f"AAA{n}", "width": 10, "height": 10, "caption": f"i{n}", "tokens": 85}


def test_the_window_keeps_the_newest_images_and_leaves_older_messages_alone():
    messages = [{"role": "user", "content": "q", "images": [_img(0)]},
                {"role": "tool", "content": "t1", "images": [_img(1), _img(2)]},
                {"role": "tool", "content": "t2"},
                {"role": "tool", "content": "t3", "images": [_img(3), _img(4), _img(5)]}]
    out = windowed(messages, 4)
    assert [[i["caption"] for i in m.get("images", [])] for m in out] == [[], ["i2"], [], ["i3", "i4", "i5"]]
    assert out[2] is messages[2] and out[3] is messages[3]  # untouched messages are the same objects
    assert "images" not in out[0] and out[0]["content"] == "q"
    assert windowed(messages, 4) == out  # deterministic
    assert carried_tokens(out) == 4 * 85
    assert all("images" not in m for m in windowed(messages, 0))


def test_a_busy_opaque_png_is_sent_as_jpeg_and_a_chart_stays_png():
    busy, _ = prepare(png(1600, 1000, noise=True), "image/png", "c", max_side=800)
    assert busy.mime == "image/jpeg" and (busy.width, busy.height) == (800, 500)
    chart, _ = prepare(png(1600, 1000), "image/png", "c", max_side=800)
    assert chart.mime == "image/png" and _open(chart).mode == "P"


def test_an_opaque_chart_goes_in_a_palette_exactly_when_it_has_few_colours():
    few = PILImage.new("RGB", (1600, 1000), (250, 250, 250))
    for i, colour in enumerate([(31, 119, 180), (255, 127, 14), (44, 160, 44), (0, 0, 0)]):
        few.paste(colour, (100 + 300 * i, 100, 300 + 300 * i, 900))
    raw = io.BytesIO()
    few.save(raw, "PNG")
    image, _ = prepare(raw.getvalue(), "image/png", "c", max_side=800)
    assert _open(image).convert("RGB").tobytes() == few.reduce(2).tobytes()
    many = PILImage.radial_gradient("L").resize((1600, 1000)).convert("RGB")
    many.paste((200, 30, 30), (0, 0, 800, 500))
    raw = io.BytesIO()
    many.save(raw, "PNG")
    image, _ = prepare(raw.getvalue(), "image/png", "c", max_side=800)
    out, ref = _open(image).convert("RGB"), many.reduce(2)
    assert _open(image).mode == "P" and out.getpixel((100, 100)) == (200, 30, 30)
    from PIL import ImageChops, ImageStat
    assert max(ImageStat.Stat(ImageChops.difference(out, ref)).mean) < 4  # a gradient moves by a few levels
