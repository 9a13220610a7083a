# Shared by fuzz-smoke.sh and fuzz-campaign.sh (sourced, not run): build the
# libFuzzer targets and make the seed corpus of each from the fixtures and
# from files the project generates itself.
#   fuzz_build          configure + build build-fuzz (clang, ASan + UBSan + libFuzzer)
#   fuzz_seeds          generate files into $gen (needs the built CLI)
#   fuzz_targets        names of the built targets (without fuzz_)
#   fuzz_fill T DIR     copy T's seeds and regression inputs into DIR
b=${FUZZ_BUILD:-build-fuzz}
gen=$b/generated
fx=${NPUKIT_FIXTURES:-../shared/data}
python=/usr/bin/python3
[ -x $python ] || python=python3

fuzz_build() {
    jobs=$(nproc 2>/dev/null || echo 2)
    CC=clang cmake -S . -B "$b" -DNPK_FUZZ=ON -DNPK_TESTS=OFF -DNPK_BENCH=OFF \
        -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
    cmake --build "$b" -j "$jobs" >/dev/null
}

fuzz_seeds() {
    if [ ! -d "$fx" ]; then
        if [ "${CI:-}" = true ]; then echo "fuzz: fixtures missing at $fx" >&2; exit 1; fi
        echo "fuzz: no fixtures at $fx; seeding from generated files only"
        fx=/nonexistent
    fi
    rm -rf "$gen"
    mkdir -p "$gen"
    npk=$b/npukit
    $npk tensor random --shape 3,4 -o $gen/a.npy
    $npk tensor random --shape 2,3 --dtype f16 -o $gen/b.npy
    $npk tensor random --shape 2,2,2 --dtype i8 -o $gen/c.npy
    $npk tensor convert a=$gen/a.npy b=$gen/b.npy -o $gen/ab.safetensors
    $npk rknpu matmul -m 4 -k 64 -n 64 -o $gen/mm.bin
    $npk rknpu matmul -m 64 -k 64 -n 64 --dtype int8 --format hex -o $gen/mm.txt
    # fuzz_rknpu_emu: mode byte 0, PC amount 108 entries (LE), then the stream.
    (printf '\000\154\000'; cat $gen/mm.bin) >$gen/mm.emu
    $npk mgk synth -o $gen/s.mgk
    $npk mgk synth --layer 8,4,1,5,4 --layer 4,6,1,1,2 --extra-records --garbage -o $gen/s2.mgk
    $npk edgetpu synth-dense --size 64 -o $gen/s.tflite
    $npk edgetpu synth-dense --size 128 --flex-width 2 --chip-keys -o $gen/s2.tflite
    $npk cnn2 pattern --size 17x9 -o $gen/p.png
    $npk cnn2 pack $gen/ab.safetensors -o $gen/bad.bin 2>/dev/null || true
    # PNG variants, DarwiNN packages, FlexBuffer options, MGK blobs, sidecars,
    # replacement weights and CNN v2 tensors (see the script's header).
    $python scripts/fuzz-seeds.py "$npk" "$gen/seeds" "$fx" >/dev/null
}

fuzz_targets() {
    ls "$b/fuzz/" | sed -n 's/^fuzz_//p'
}

# Seeds per target: fixture folders / generated files by pattern.
seeds_for() {
    s=$gen/seeds
    case $1 in
    npy) ls $gen/*.npy ;;
    safetensors) ls $gen/*.safetensors $s/cnn2_pack/* $s/mgk_replace/* ;;
    mgk) ls "$fx"/mgk/* $gen/*.mgk $s/*.mgk 2>/dev/null ;;
    mgk_blob) ls $s/mgk_blob/* ;;
    mgk_replace) ls $s/mgk_replace/* ;;
    rknpu_stream | rknpu_plan) ls "$fx"/rknpu/golden/*x*.txt $gen/mm.* 2>/dev/null ;;
    rknpu_emu) ls $gen/mm.emu ;; # plus fuzz/regressions/rknpu_emu
    rknpu_layer) true ;;         # fuzz/regressions/rknpu_layer only
    rknpu_net) ls fuzz/regressions/tflite_interp/* 2>/dev/null ;; # plus fuzz/regressions/rknpu_net
    edgetpu_usb) ls $s/edgetpu_usb/* ;;
    flatbuf | edgetpu | tflite) ls "$fx"/edgetpu/*.tflite $gen/*.tflite 2>/dev/null ;;
    darwinn) ls $s/darwinn/* ;;
    flexbuf) ls $s/flexbuf/* ;;
    sidecar) ls $s/sidecar/* ;;
    cnn2) ls "$fx"/cnn2/* 2>/dev/null ;;
    cnn2_pack) ls $s/cnn2_pack/* $gen/ab.safetensors ;;
    png) ls $s/png/* ;;
    image) ls $s/png/* "$fx"/models/cat.bmp 2>/dev/null ;; # plus fuzz/regressions/image
    labels) ls "$fx"/models/*labels*.txt 2>/dev/null ;;    # plus fuzz/regressions/labels
    *) ls "$fx"/*/* $gen/* 2>/dev/null ;;
    esac
}

fuzz_fill() {
    mkdir -p "$2"
    for f in $(seeds_for "$1"); do [ -f "$f" ] && cp "$f" "$2/"; done
    if [ -d fuzz/regressions/$1 ]; then
        find fuzz/regressions/$1 -type f ! -name '.*' -exec cp {} "$2/" \;
    fi
    return 0
}
