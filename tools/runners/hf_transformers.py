#!/usr/bin/env python3
"""tools/runners/hf_transformers.py - the reference runner of `llmco2 measure` (protocol: docs/measure.md).

Builds a model from its config.json with random weights (nothing is downloaded: to first order a forward pass costs
the same energy whatever the weights' values), places it on the GPUs in CUDA_VISIBLE_DEVICES, and runs Hugging Face
transformers' generate() with exactly the requested batch, prompt and generation lengths (greedy, EOS ignored:
min_new_tokens = max_new_tokens). One JSON object per line on stdin (requests) and stdout (answers); logs go to
stderr.

Needs: python3, torch with CUDA, transformers; accelerate for more than one GPU (layers split over the GPUs, as
device_map="auto" does: one GPU busy at a time).
"""
import json
import platform
import sys
import time
import traceback

DTYPES = {"bf16": "bfloat16", "fp16": "float16", "fp32": "float32"}


def say(**message):
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def log(text):
    sys.stderr.write(f"hf_transformers.py: {text}\n")
    sys.stderr.flush()


class Runner:
    def __init__(self, torch, transformers):
        self.torch = torch
        self.transformers = transformers
        self.model = None
        self.vocab = 0
        self.prepared = {}

    def load(self, message):
        torch, transformers = self.torch, self.transformers
        if message.get("dtype") not in DTYPES:
            raise ValueError(f"dtype {message.get('dtype')!r} is not supported by this runner "
                             f"(expected one of {', '.join(DTYPES)})")
        dtype = getattr(torch, DTYPES[message["dtype"]])
        with open(message["config"]) as f:
            fields = json.load(f)
        config = transformers.AutoConfig.for_model(fields.pop("model_type"), **fields)
        self.vocab = int(config.vocab_size)
        self.model = None
        torch.cuda.empty_cache()
        started = time.perf_counter()
        gpus = int(message.get("gpus", 1))
        if gpus == 1:
            with torch.device("cuda:0"):
                model = transformers.AutoModelForCausalLM.from_config(config, torch_dtype=dtype)
            parallelism = "tensor"
        else:
            model = self.split_over_gpus(config, dtype, gpus)
            parallelism = "layer_split"
        model.eval()
        self.model = model
        torch.cuda.synchronize()
        return parallelism, time.perf_counter() - started

    def split_over_gpus(self, config, dtype, gpus):
        """Random weights created layer by layer on the GPU each layer is placed on (accelerate's device map)."""
        import accelerate
        with accelerate.init_empty_weights():
            model = self.transformers.AutoModelForCausalLM.from_config(config, torch_dtype=dtype)
        device_map = accelerate.infer_auto_device_map(model, dtype=dtype,
                                                      no_split_module_classes=model._no_split_modules)
        for name, device in device_map.items():
            module = model.get_submodule(name) if name else model
            module.to_empty(device=f"cuda:{device}" if isinstance(device, int) else device)
        model.apply(model._init_weights)
        return accelerate.dispatch_model(model, device_map=device_map)

    def prepare(self, message):
        if self.model is None:
            raise RuntimeError("no model loaded")
        torch = self.torch
        batch, prompt, gen = int(message["batch"]), int(message["prompt"]), int(message["gen"])
        ids = torch.randint(low=0, high=self.vocab, size=(batch, prompt), device="cuda:0")
        self.prepared[message["id"]] = (ids, torch.ones_like(ids), prompt, gen)

    def go(self, message):
        torch = self.torch
        ids, mask, prompt, gen = self.prepared.pop(message["id"])
        torch.cuda.synchronize()
        started = time.perf_counter()
        with torch.inference_mode():
            out = self.model.generate(input_ids=ids, attention_mask=mask, max_new_tokens=gen, min_new_tokens=gen,
                                      do_sample=False, use_cache=True, pad_token_id=0)
        torch.cuda.synchronize()
        elapsed = time.perf_counter() - started
        return elapsed, prompt, out.shape[1] - prompt


def serve(runner):
    for line in sys.stdin:
        if not line.strip():
            continue
        message = json.loads(line)
        op = message.get("op")
        try:
            if op == "quit":
                return 0
            if op == "load":
                parallelism, load_s = runner.load(message)
                say(event="loaded", parallelism=parallelism, load_s=load_s)
            elif op == "prepare":
                runner.prepare(message)
                say(event="ready", id=message["id"])
            elif op == "go":
                elapsed, prompt, generated = runner.go(message)
                say(event="done", id=message["id"], elapsed_s=elapsed, prompt_tokens=prompt, gen_tokens=generated)
            else:
                say(event="error", kind="protocol", message=f"unknown op {op!r}")
        except runner.torch.cuda.OutOfMemoryError as e:
            runner.prepared.clear()
            runner.torch.cuda.empty_cache()
            say(event="error", kind="oom", message=str(e).splitlines()[0][:300])
        except Exception as e:  # noqa: BLE001 - every failure is reported to the harness, which records it
            log(traceback.format_exc())
            say(event="error", kind="error", message=f"{type(e).__name__}: {e}"[:500])
    return 0


def main():
    try:
        import torch
        import transformers
    except ImportError as e:
        say(event="error", kind="setup", message=f"the reference runner needs torch and transformers: {e}")
        return 1
    if not torch.cuda.is_available():
        say(event="error", kind="setup", message="torch sees no CUDA GPU")
        return 1
    say(event="hello", engine="hf-transformers",
        versions={"python": platform.python_version(), "torch": torch.__version__, "cuda": torch.version.cuda,
                  "transformers": transformers.__version__, "gpu": torch.cuda.get_device_name(0)})
    return serve(Runner(torch, transformers))


if __name__ == "__main__":
    sys.exit(main())
