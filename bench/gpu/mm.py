"""mm.py: bf16 matrix-product throughput of GPU 0 (the GPU device check's PyTorch step).
Prints one line: `mm: N TFLOP/s on DEVICE`."""
import torch

n = 8192
a = torch.randn(n, n, device="cuda", dtype=torch.bfloat16)
b = torch.randn(n, n, device="cuda", dtype=torch.bfloat16)
for _ in range(5):
    a @ b
torch.cuda.synchronize()
start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
reps = 50
start.record()
for _ in range(reps):
    a @ b
end.record()
torch.cuda.synchronize()
ms = start.elapsed_time(end) / reps
print(f"mm: {2 * n**3 / ms / 1e9:.1f} TFLOP/s on {torch.cuda.get_device_name(0)}")
