#!/usr/bin/python3
"""Seed files for the fuzz targets that need more than a whole fixture.

usage: fuzz-seeds.py NPUKIT OUT_DIR [FIXTURES]

Writes, under OUT_DIR:
  png/          PNGs of every colour type and bit depth, palette + tRNS,
                Adam7 interlacing, ancillary chunks, and the CLI's own
                `cnn2 pattern` pictures
  darwinn/      DWN1 packages cut out of compiled Edge TPU models
                (offsets from `npukit edgetpu info --json`)
  flexbuf/      the FlexBuffer custom options of the same operators
  edgetpu_usb/  the compiled models behind fuzz_edgetpu_usb's mode byte
  sidecar/      template sidecars (JSON) written here, plus the fixtures' ones
  mgk_blob/     `model` blobs cut out of MGK files (`npukit mgk info --json`)
  mgk_replace/  `npukit mgk extract` of the model fuzz_mgk_replace.c builds
  cnn2_pack/    `npukit cnn2 unpack` of every valid CNN v2 fixture
Only the Python standard library is used (the PNG writer is a few lines of
zlib + struct, so the seeds do not depend on an imaging package)."""
import json
import os
import struct
import subprocess
import sys
import zlib


def run(npk, *args):
    return subprocess.run([npk, *args], check=True, stdout=subprocess.PIPE).stdout


# ---- PNG ----

def chunk(kind, data):
    body = kind + data
    return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))


def png(width, height, color, depth, rows, extra=b"", interlace=0, plte=None, trns=None):
    """rows(x, y) -> packed row bytes for the given x range (filter 0)."""
    out = b"\x89PNG\r\n\x1a\n"
    out += chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, depth, color, 0, 0, interlace))
    if plte:
        out += chunk(b"PLTE", plte)
    if trns:
        out += chunk(b"tRNS", trns)
    out += extra
    raw = b""
    if interlace:
        passes = [(0, 0, 8, 8), (4, 0, 8, 8), (0, 4, 4, 8), (2, 0, 4, 4), (0, 2, 2, 4),
                  (1, 0, 2, 2), (0, 1, 1, 2)]
        for x0, y0, dx, dy in passes:
            xs = list(range(x0, width, dx))
            if not xs:
                continue
            for y in range(y0, height, dy):
                raw += b"\x00" + rows(xs, y)
    else:
        for y in range(height):
            raw += b"\x00" + rows(list(range(width)), y)
    out += chunk(b"IDAT", zlib.compress(raw, 9))
    return out + chunk(b"IEND", b"")


CHANNELS = {0: 1, 2: 3, 3: 1, 4: 2, 6: 4}


def sampler(color, depth):
    n = CHANNELS[color]
    top = (1 << depth) - 1

    def rows(xs, y):
        vals = [((x * 37 + y * 11 + c * 53) % (top + 1)) for x in xs for c in range(n)]
        if depth == 16:
            return b"".join(struct.pack(">H", v) for v in vals)
        if depth == 8:
            return bytes(vals)
        bits, acc, k = b"", 0, 0  # sub-byte depths: pack MSB first
        for v in vals:
            acc = (acc << depth) | v
            k += depth
            if k == 8:
                bits += bytes([acc])
                acc, k = 0, 0
        if k:
            bits += bytes([acc << (8 - k)])
        return bits

    return rows


def png_seeds(out, npk):
    d = os.path.join(out, "png")
    os.makedirs(d, exist_ok=True)
    n = 0
    for color, depths in ((0, (1, 2, 4, 8, 16)), (2, (8, 16)), (3, (1, 2, 4, 8)), (4, (8, 16)),
                          (6, (8, 16))):
        for depth in depths:
            plte = bytes((i * 7) % 256 for i in range(3 * (1 << min(depth, 8)))) if color == 3 else None
            trns = None
            if color == 3:
                trns = bytes([0, 128, 255])
            elif color == 0 and depth == 8:
                trns = struct.pack(">H", 5)
            elif color == 2 and depth == 8:
                trns = struct.pack(">HHH", 1, 2, 3)
            for interlace in (0, 1) if depth in (8, 1) else (0,):
                data = png(7, 5, color, depth, sampler(color, depth), interlace=interlace,
                           plte=plte, trns=trns)
                with open(os.path.join(d, "c%d_d%d_i%d.png" % (color, depth, interlace)), "wb") as f:
                    f.write(data)
                n += 1
    extra = (chunk(b"gAMA", struct.pack(">I", 45455)) + chunk(b"pHYs", struct.pack(">IIB", 2835, 2835, 1)) +
             chunk(b"tEXt", b"Comment\x00npukit seed") + chunk(b"sRGB", b"\x00"))
    with open(os.path.join(d, "ancillary.png"), "wb") as f:
        f.write(png(3, 2, 6, 8, sampler(6, 8), extra=extra))
    for size, alpha in (("17x9", True), ("1x1", False), ("64x3", False)):
        args = ["cnn2", "pattern", "--size", size, "-o", os.path.join(d, "pattern_%s.png" % size)]
        run(npk, *(args + (["--alpha"] if alpha else [])))
    return n + 4


# ---- pieces cut out of model files ----

def cut(src, offset, size, dst):
    with open(src, "rb") as f:
        f.seek(offset)
        data = f.read(size)
    with open(dst, "wb") as f:
        f.write(data)


def darwinn_seeds(out, npk, models):
    d = os.path.join(out, "darwinn")
    fx = os.path.join(out, "flexbuf")
    os.makedirs(d, exist_ok=True)
    os.makedirs(fx, exist_ok=True)
    n = 0
    for m in models:
        info = json.loads(run(npk, "edgetpu", "info", "--json", m))
        for i, op in enumerate(info.get("operators", [])):
            if "custom_options_offset" in op:
                cut(m, op["custom_options_offset"], op["custom_options_size"],
                    os.path.join(fx, "%s.%d.flex" % (os.path.basename(m), i)))
        for op in info.get("edgetpu_ops", []):
            for i, p in enumerate(op["packages"]):
                cut(m, p["offset"], p["size"], os.path.join(d, "%s.%d.dwn1" % (os.path.basename(m), i)))
                n += 1
    return n


def mgk_blob_seeds(out, npk, models):
    d = os.path.join(out, "mgk_blob")
    os.makedirs(d, exist_ok=True)
    for m in models:
        info = json.loads(run(npk, "mgk", "info", "--json", m))
        s = [s for s in info["sections"] if s["name"] == "model"][0]
        cut(m, s["offset"], s["size"], os.path.join(d, os.path.basename(m) + ".blob"))
    return len(models)


def sidecar_seeds(out, fx):
    d = os.path.join(out, "sidecar")
    os.makedirs(d, exist_ok=True)
    import base64
    dense = {"matrix_size": 64, "weight_scale": 0.0085, "weight_zero_point": 0,
             "input_scale": 0.0078, "input_zero_point": 127, "output_scale": 0.019,
             "output_zero_point": 129, "use_bias": False, "param_size": 4608,
             "param_overhead": base64.b64encode(bytes(range(256)) * 2).decode()}
    gabor = {"height": 64, "width": 64, "ksize": 7, "input_scale": 0.0039,
             "input_zero_point": 0, "output_scale": 0.0023, "output_zero_point": 0,
             "output_count": 2048}
    for name, obj in (("dense.json", dense), ("gabor.json", gabor)):
        with open(os.path.join(d, name), "w") as f:
            json.dump(obj, f)
    if fx and os.path.isdir(os.path.join(fx, "edgetpu")):
        for f in os.listdir(os.path.join(fx, "edgetpu")):
            if f.endswith(".json"):
                cut(os.path.join(fx, "edgetpu", f), 0, 1 << 20, os.path.join(d, f))


def main():
    npk, out = sys.argv[1], sys.argv[2]
    fx = sys.argv[3] if len(sys.argv) > 3 else ""
    os.makedirs(out, exist_ok=True)
    fixture = lambda *p: os.path.join(fx, *p)
    have_fx = fx and os.path.isdir(fx)

    png_seeds(out, npk)
    sidecar_seeds(out, fx)

    synth = os.path.join(out, "synth_edgetpu.tflite")
    run(npk, "edgetpu", "synth-dense", "--size", "64", "-o", synth)
    tfl = [synth]
    if have_fx:
        tfl += sorted(fixture("edgetpu", f) for f in os.listdir(fixture("edgetpu"))
                      if f.endswith("_edgetpu.tflite"))
    darwinn_seeds(out, npk, tfl)
    # fuzz_edgetpu_usb: an even first byte, then a model to plan and run.
    usb = os.path.join(out, "edgetpu_usb")
    os.makedirs(usb, exist_ok=True)
    for m in tfl:
        with open(m, "rb") as f, open(os.path.join(usb, os.path.basename(m)), "wb") as o:
            o.write(b"\0" + f.read())

    # The model of fuzz_mgk_replace.c (keep the layers and seed in step).
    rep = os.path.join(out, "mgk_replace")
    os.makedirs(rep, exist_ok=True)
    mg = os.path.join(out, "replace.mgk")
    run(npk, "mgk", "synth", "--layer", "16,8,3,3,8", "--layer", "8,4,1,5,4", "--layer", "4,6,1,1,2",
        "--layer", "6,3,3,3,6", "--seed", "1", "-o", mg)
    run(npk, "mgk", "extract", mg, "-o", os.path.join(rep, "extract.safetensors"))
    mgks = [mg]
    extra = os.path.join(out, "extra.mgk")
    run(npk, "mgk", "synth", "--extra-records", "--garbage", "-o", extra)
    mgks.append(extra)
    if have_fx:
        mgks.append(fixture("mgk", "AEC_T41_16K_NS_OUT_UC.mgk"))
    mgk_blob_seeds(out, npk, mgks)

    c2 = os.path.join(out, "cnn2_pack")
    os.makedirs(c2, exist_ok=True)
    if have_fx:
        for f in sorted(os.listdir(fixture("cnn2"))):
            if f.startswith("synthetic_"):
                run(npk, "cnn2", "unpack", fixture("cnn2", f), "-o",
                    os.path.join(c2, f.replace(".bin", ".safetensors")))


if __name__ == "__main__":
    main()
