"""The LM bench's files, written by NumPy and python3-onnx (Debian's /usr/bin/python3).

  checkpoint.py make OUT --layers L --embd D --heads H --vocab V --positions P --seed S
      OUT/f32/  config.json, model.safetensors, model.onnx (its weights: external data in model.safetensors,
                and its output projection, wte transposed, in lm_head.bin)
      OUT/f16/  config.json, model.safetensors (the same values rounded to float16)
      OUT/bf16/ config.json, model.safetensors (rounded to bfloat16)
      OUT/manifest.json  the parameters, the files' sizes, the weights' bytes
  checkpoint.py reference OUT DTYPE --prompt 1,2,3 [--steps N] [--rows 0,5] --out FILE
      N greedy tokens after the prompt (float64), with whether the bound decides each, then the float64 logits
      of the given rows (all by default) of the prompt followed by the first N − 1 greedy tokens (the rows whose
      argmax is each greedy token), and their float32 bound (gpt2_reference.py); FILE gets the logits then the
      bounds as float64, the JSON summary goes to stdout.
"""
import argparse
import json
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gpt2_onnx  # noqa: E402
import gpt2_reference  # noqa: E402
import gpt2_weights  # noqa: E402


def make(args):
    cfg = gpt2_weights.gpt2_config(args.layers, args.embd, args.heads, args.vocab, args.positions)
    t0 = time.time()
    sd = gpt2_weights.random_state_dict(cfg, args.seed)
    manifest = {"generatorVersion": gpt2_weights.GENERATOR_VERSION, "seed": args.seed, "config": cfg,
                "parameters": int(sum(t.size for t in sd.values())), "dtypes": {}}
    for dtype in ("F32", "F16", "BF16"):
        folder = os.path.join(args.out, dtype.lower())
        os.makedirs(folder, exist_ok=True)
        with open(os.path.join(folder, "config.json"), "w") as f:
            json.dump({**cfg, "torch_dtype": {"F32": "float32", "F16": "float16", "BF16": "bfloat16"}[dtype]}, f, indent=2)
        offsets = gpt2_weights.write_safetensors(os.path.join(folder, "model.safetensors"), sd, dtype)
        manifest["dtypes"][dtype] = {"folder": dtype.lower(), "bytes": os.path.getsize(os.path.join(folder, "model.safetensors")),
                                     "weightBytes": int(sum(n for _, n in offsets.values()))}
        if dtype == "F32":
            np.ascontiguousarray(sd["transformer.wte.weight"].T).astype("<f4").tofile(os.path.join(folder, "lm_head.bin"))
            model = gpt2_onnx.build(cfg, {k: list(v.shape) for k, v in sd.items()}, offsets)
            gpt2_onnx.save(model, os.path.join(folder, "model.onnx"))
    manifest["seconds"] = round(time.time() - t0, 1)
    with open(os.path.join(args.out, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=2)
    print(json.dumps(manifest))


def reference(args):
    folder = os.path.join(args.dir, args.dtype.lower())
    with open(os.path.join(folder, "config.json")) as f:
        cfg = json.load(f)
    t0 = time.time()
    w = {k: v.astype(np.float64) for k, v in gpt2_weights.read_safetensors(os.path.join(folder, "model.safetensors")).items()}
    prompt = [int(t) for t in args.prompt.split(",")]
    tokens, sure = gpt2_reference.greedy(w, cfg, prompt, args.steps) if args.steps else ([], [])
    sequence = np.array(prompt + tokens[:-1])
    rows = [int(r) for r in args.rows.split(",")] if args.rows else list(range(len(sequence)))
    logits, bound = gpt2_reference.forward(w, cfg, sequence, head_rows=rows)
    with open(args.out, "wb") as f:
        f.write(np.ascontiguousarray(logits, dtype="<f8").tobytes())
        f.write(np.ascontiguousarray(bound, dtype="<f8").tobytes())
    print(json.dumps({"rows": rows, "vocab": cfg["vocab_size"], "greedy": tokens, "decided": sure,
                      "maxBound": float(bound.max()), "logitScale": float(np.abs(logits).max()),
                      "seconds": round(time.time() - t0, 1)}))


def main():
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="command", required=True)
    m = sub.add_parser("make")
    m.add_argument("out")
    for name in ("layers", "embd", "heads", "vocab", "positions", "seed"):
        m.add_argument(f"--{name}", type=int, required=True)
    r = sub.add_parser("reference")
    r.add_argument("dir")
    r.add_argument("dtype", choices=["F32", "F16", "BF16", "f32", "f16", "bf16"])
    r.add_argument("--prompt", required=True)
    r.add_argument("--rows", default="")
    r.add_argument("--steps", type=int, default=0)
    r.add_argument("--out", required=True)
    args = ap.parse_args()
    {"make": make, "reference": reference}[args.command](args)


if __name__ == "__main__":
    main()
