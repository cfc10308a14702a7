"""softmax(q k^T) v for narrow heads on the CPU, in one pass that never stores the scores.

The fast model's head 2 (points attending to points, :mod:`lloydlib.fast_layer`) is a dot-product
attention whose queries, keys and values are narrow (e = d + 1 and f = d columns: 5 and 4 at the Leaner
paper's d=4) while the score matrix is wide (n x n per task: 8.4 million entries at n=512 and 32 tasks).
Batched matrix products with an inner or outer dimension of 4 or 5 run far below a core's speed, and a
stored (batch, n, n) weight matrix is read and written several times per step; at n=512 that was about
three quarters of a training step. This kernel runs, for each query row i of each task,

    s_j = (scale q_i) . k_j,   m = max_j s_j,   p_j = exp(s_j - m),   l = sum_j p_j,
    out_i = (sum_j p_j v_j) / l,   lse_i = m + log l                                   (forward)

and, given the output's gradient g_i, with delta_i = g_i . out_i and p_j = exp(s_j - lse_i),

    ds_j = p_j (g_i . v_j - delta_i),  dk_j += ds_j (scale q_i),  dq_i = scale sum_j ds_j k_j,
    dv_j += p_j g_i                                                                     (backward)

so the backward recomputes each row's weights from the forward's log-sum-exp (one row of m' numbers in the
core's first-level cache) instead of reading a stored matrix, and forms only the gradients asked for. The
loops over keys are vectorised by the compiler (``#pragma omp simd``), ``exp`` by a polynomial (Cephes'
``expf``: relative error about 1e-7, weights below exp(-87.3) are 0), and tasks run on
``torch.get_num_threads()`` OpenMP threads; each task's arithmetic is the same on any number of threads.
A task whose queries, keys or values are not all finite gets NaN outputs (and gradients), so a diverging
run's loss reports it, as the unfused softmax's NaN would.

A loop with a branch in it is not vectorised by gcc on a processor without AVX-512's masks, so none of the
loops over keys holds one: ``exp``'s clamp below -87.3 is a select that gcc turns into a vector blend only
under ``-fno-trapping-math`` (it keeps NaN a NaN), and the backward's row loop is compiled twice, with and
without the keys' gradient, rather than asking inside the loop. Without them, on an AVX2 processor (AMD
EPYC, gcc 12.2), both loops ran one lane at a time and a training step at n=512 took 3 times as long
(``python -m lloydlib bench train-step --n 512 --d 4 --k 6 --threads 1 --no-compile``: 125 CPU ms a step
against 40 to 46).

The kernel is C compiled once per machine with the system's C compiler (``cc -O3 -march=native -fopenmp``)
into ``$LLOYD_KERNEL_CACHE`` (default ``~/.cache/lloydlib/kernels``) and loaded with ``ctypes``: no
Python headers and no build tool beyond the compiler that ``torch.compile`` needs on a CPU anyway.
:func:`available` says whether it could be built; where it cannot (no compiler), float64, or a device
other than the CPU, the caller uses :func:`lloydlib.attention.blocked_attention`, which computes the same
function up to rounding.
"""

from __future__ import annotations

import ctypes
import functools
import hashlib
import os
import platform
import subprocess
import tempfile
import warnings
from pathlib import Path

import torch

__all__ = ["SOURCE", "available", "fused_attention", "kernel_path"]

SOURCE = r"""
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define INLINE static inline __attribute__((always_inline))

INLINE float exp_neg(float x) {
    /* exp(x) for x <= ~0 (Cephes expf); 0 below -87.3; NaN stays NaN */
    float under = x < -87.33654f ? 0.0f : 1.0f;
    x = x < -87.33654f ? -87.33654f : x;
    /* round to nearest by the 1.5 * 2^23 trick (no libm call, so the loop vectorises) */
    float fx = (x * 1.44269504088896341f + 12582912.0f) - 12582912.0f;
    float r = x - fx * 0.693359375f + fx * 2.12194440e-4f;
    float z = r * r;
    float y = 1.9875691500e-4f;
    y = y * r + 1.3981999507e-3f;
    y = y * r + 8.3334519073e-3f;
    y = y * r + 4.1665795894e-2f;
    y = y * r + 1.6666665459e-1f;
    y = y * r + 5.0000001201e-1f;
    y = y * z + r + 1.0f;
    union { uint32_t u; float f; } pow2;
    pow2.u = ((uint32_t)((int32_t)fx + 127)) << 23;
    return y * pow2.f * under;
}

static int all_finite(const float *a, long count) {
    int ok = 1;
    for (long t = 0; t < count; t++) ok &= isfinite(a[t]) != 0;
    return ok;
}

static void transpose(const float *a, float *aT, long rows, long cols) {
    for (long r = 0; r < rows; r++)
        for (long c = 0; c < cols; c++) aT[c * rows + r] = a[r * cols + c];
}

/* One task's forward: kT (e, mp) and vT (f, mp) are its keys and values transposed, s a row of scratch.
   With e and f constants (see the dispatch below) every loop over keys is one vectorised pass. */
INLINE void fwd_task(const float *qb, const float *kT, const float *vT, float *ob, float *lb, float *s, long m,
                     long mp, long e, long f, float scale) {
    float qs[64];
    for (long i = 0; i < m; i++) {
        for (long a = 0; a < e; a++) qs[a] = scale * qb[i * e + a];
        float mx = -INFINITY;
#pragma omp simd reduction(max : mx)
        for (long j = 0; j < mp; j++) {
            float acc = 0.0f;
            for (long a = 0; a < e; a++) acc += qs[a] * kT[a * mp + j];
            s[j] = acc;
            mx = acc > mx ? acc : mx;
        }
        float l = 0.0f;
#pragma omp simd reduction(+ : l)
        for (long j = 0; j < mp; j++) {
            s[j] = exp_neg(s[j] - mx);
            l += s[j];
        }
        for (long c = 0; c < f; c++) {
            const float *vc = vT + c * mp;
            float acc = 0.0f;
#pragma omp simd reduction(+ : acc)
            for (long j = 0; j < mp; j++) acc += s[j] * vc[j];
            ob[i * f + c] = acc / l;
        }
        lb[i] = mx + logf(l);
    }
}

/* One query row's pass over the keys of the backward: p and ds, and dkT where with_dk. with_dk is a constant
   in each inlined copy: a branch inside the loop would keep gcc from vectorising it. */
INLINE void bwd_row(const float *kT, const float *vT, const float *qs, const float *gi, float delta, float L,
                    float *dkT, float *p, float *ds, long mp, long e, long f, const int with_dk) {
#pragma omp simd
    for (long j = 0; j < mp; j++) {
        float sc = 0.0f, dp = 0.0f;
        for (long a = 0; a < e; a++) sc += qs[a] * kT[a * mp + j];
        for (long c = 0; c < f; c++) dp += gi[c] * vT[c * mp + j];
        float pj = exp_neg(sc - L);
        float dsj = pj * (dp - delta);
        p[j] = pj;
        ds[j] = dsj;
        if (with_dk)
            for (long a = 0; a < e; a++) dkT[a * mp + j] += dsj * qs[a];
    }
}

/* One task's backward into dkT (e, mp) and dvT (f, mp) (transposed, zeroed by the caller) and dq (m, e),
   each only where asked for; p and ds are rows of scratch. */
INLINE void bwd_task(const float *qb, const float *kT, const float *vT, const float *ob, const float *lb,
                     const float *gb, float *dq, float *dkT, float *dvT, float *p, float *ds, long m, long mp,
                     long e, long f, float scale) {
    float qs[64], gi[64];
    for (long i = 0; i < m; i++) {
        float delta = 0.0f;
        for (long c = 0; c < f; c++) {
            gi[c] = gb[i * f + c];
            delta += gi[c] * ob[i * f + c];
        }
        for (long a = 0; a < e; a++) qs[a] = scale * qb[i * e + a];
        if (dkT)
            bwd_row(kT, vT, qs, gi, delta, lb[i], dkT, p, ds, mp, e, f, 1);
        else
            bwd_row(kT, vT, qs, gi, delta, lb[i], dkT, p, ds, mp, e, f, 0);
        if (dvT)
            for (long c = 0; c < f; c++) {
                const float gc = gi[c];
                float *dc = dvT + c * mp;
#pragma omp simd
                for (long j = 0; j < mp; j++) dc[j] += p[j] * gc;
            }
        if (dq)
            for (long a = 0; a < e; a++) {
                const float *ka = kT + a * mp;
                float acc = 0.0f;
#pragma omp simd reduction(+ : acc)
                for (long j = 0; j < mp; j++) acc += ds[j] * ka[j];
                dq[i * e + a] = scale * acc;
            }
    }
}

void lloyd_attn_fwd(const float *q, const float *k, const float *v, float *out, float *lse, long B, long m,
                    long mp, long e, long f, float scale, int threads) {
#pragma omp parallel for num_threads(threads) schedule(static)
    for (long b = 0; b < B; b++) {
        const float *qb = q + b * m * e, *kb = k + b * mp * e, *vb = v + b * mp * f;
        float *ob = out + b * m * f, *lb = lse + b * m;
        if (!(all_finite(qb, m * e) && all_finite(kb, mp * e) && all_finite(vb, mp * f))) {
            for (long t = 0; t < m * f; t++) ob[t] = NAN;
            for (long i = 0; i < m; i++) lb[i] = NAN;
            continue;
        }
        float *kT = malloc(sizeof(float) * mp * (e + f + 1));
        float *vT = kT + mp * e, *s = vT + mp * f;
        transpose(kb, kT, mp, e);
        transpose(vb, vT, mp, f);
        switch (f == e - 1 ? e : 0) {  /* head 2 at d = e - 1: the widths as constants, so each loop vectorises */
#define FWD(E) case E: fwd_task(qb, kT, vT, ob, lb, s, m, mp, E, E - 1, scale); break;
            FWD(2) FWD(3) FWD(4) FWD(5) FWD(6) FWD(7) FWD(8) FWD(9)
            default: fwd_task(qb, kT, vT, ob, lb, s, m, mp, e, f, scale);
        }
        free(kT);
    }
}

void lloyd_attn_bwd(const float *q, const float *k, const float *v, const float *out, const float *lse,
                    const float *g, float *dq, float *dk, float *dv, long B, long m, long mp, long e, long f,
                    float scale, int threads) {
#pragma omp parallel for num_threads(threads) schedule(static)
    for (long b = 0; b < B; b++) {
        const float *qb = q + b * m * e, *kb = k + b * mp * e, *vb = v + b * mp * f;
        const float *ob = out + b * m * f, *lb = lse + b * m, *gb = g + b * m * f;
        float *kT = malloc(sizeof(float) * mp * (2 * e + 2 * f + 2));
        float *vT = kT + mp * e, *dkT = vT + mp * f, *dvT = dkT + mp * e, *p = dvT + mp * f, *ds = p + mp;
        transpose(kb, kT, mp, e);
        transpose(vb, vT, mp, f);
        memset(dkT, 0, sizeof(float) * mp * (e + f));
        float *dqb = dq ? dq + b * m * e : NULL, *dkTb = dk ? dkT : NULL, *dvTb = dv ? dvT : NULL;
        switch (f == e - 1 ? e : 0) {
#define BWD(E) case E: bwd_task(qb, kT, vT, ob, lb, gb, dqb, dkTb, dvTb, p, ds, m, mp, E, E - 1, scale); break;
            BWD(2) BWD(3) BWD(4) BWD(5) BWD(6) BWD(7) BWD(8) BWD(9)
            default: bwd_task(qb, kT, vT, ob, lb, gb, dqb, dkTb, dvTb, p, ds, m, mp, e, f, scale);
        }
        if (dk) transpose(dkT, dk + b * mp * e, e, mp);
        if (dv) transpose(dvT, dv + b * mp * f, f, mp);
        free(kT);
    }
}
"""

#: the widest queries the kernel takes: head 2's e = d + 1 with values f = d, for d = 1..8, each width compiled
#: as a constant (a loop over a width known only at run time does not vectorise: at d=16 such a kernel took
#: 410 ms against the blocked attention's 23 ms; wider heads are matrix products the blocked attention runs well)
MAX_WIDTH = 9
_FLAGS = ["-O3", "-march=native", "-fopenmp", "-fPIC", "-shared", "-fno-math-errno", "-fno-trapping-math"]


def kernel_path() -> Path:
    """Where this machine's build of :data:`SOURCE` lives: ``$LLOYD_KERNEL_CACHE`` (default
    ``~/.cache/lloydlib/kernels``), named by a hash of the source, the flags and the processor, since
    ``-march=native`` builds for this processor only."""
    root = Path(os.environ.get("LLOYD_KERNEL_CACHE") or Path.home() / ".cache" / "lloydlib" / "kernels")
    cpu = platform.processor() or platform.machine()
    try:
        cpu += next((ln for ln in Path("/proc/cpuinfo").read_text().splitlines() if ln.startswith("model name")), "")
    except OSError:
        pass
    tag = hashlib.sha256("\0".join([SOURCE, *_FLAGS, cpu]).encode()).hexdigest()[:16]
    return root / f"lloyd_attention_{tag}.so"


def _build(path: Path) -> None:
    """Compile :data:`SOURCE` to ``path`` through a temporary file, so that processes building at once
    never load a half-written library."""
    path.parent.mkdir(parents=True, exist_ok=True)
    cc = os.environ.get("CC", "cc")
    with tempfile.TemporaryDirectory(dir=path.parent) as tmp:
        src, lib = Path(tmp) / "kernel.c", Path(tmp) / "kernel.so"
        src.write_text(SOURCE)
        subprocess.run([cc, *_FLAGS, str(src), "-o", str(lib), "-lm"], check=True, capture_output=True, timeout=120)
        os.replace(lib, path)


@functools.cache
def _library() -> ctypes.CDLL | None:
    """The loaded kernel, built on first use (once per process); None, with a warning, where it cannot be
    built."""
    path = kernel_path()
    try:
        if not path.exists():
            _build(path)
        lib = ctypes.CDLL(str(path))
    except (OSError, subprocess.SubprocessError) as e:
        detail = (getattr(e, "stderr", b"") or b"").decode(errors="replace")[:300]
        warnings.warn(
            f"lloydlib's fused CPU attention could not be built ({type(e).__name__}: {e} {detail}); "
            "using the blocked attention instead",
            RuntimeWarning,
            stacklevel=3,
        )
        return None
    for name in ("lloyd_attn_fwd", "lloyd_attn_bwd"):
        getattr(lib, name).restype = None
    return lib


@torch.compiler.assume_constant_result  # so that torch.compile does not trace the build
def available() -> bool:
    """Whether the fused kernel is built and loaded on this machine (building it if needed)."""
    return _library() is not None


def _ptr(t: torch.Tensor | None):
    return None if t is None else ctypes.c_void_p(t.data_ptr())


def _sizes(q, k, v):
    B, m, e = q.shape
    return [ctypes.c_long(x) for x in (B, m, k.shape[1], e, v.shape[2])]


@torch.library.custom_op("lloydlib::fused_attention_fwd", mutates_args=())
def _forward(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, scale: float) -> tuple[torch.Tensor, torch.Tensor]:
    """The forward: (out (batch, m, f), lse (batch, m)), the rows' log-sum-exp of the scaled scores."""
    out = q.new_empty(q.shape[0], q.shape[1], v.shape[2])
    lse = q.new_empty(q.shape[0], q.shape[1])
    _library().lloyd_attn_fwd(
        _ptr(q), _ptr(k), _ptr(v), _ptr(out), _ptr(lse), *_sizes(q, k, v),
        ctypes.c_float(scale), ctypes.c_int(torch.get_num_threads()),
    )  # fmt: skip
    return out, lse


@_forward.register_fake
def _(q, k, v, scale):
    return q.new_empty(q.shape[0], q.shape[1], v.shape[2]), q.new_empty(q.shape[0], q.shape[1])


@torch.library.custom_op("lloydlib::fused_attention_bwd", mutates_args=())
def _backward(
    q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, out: torch.Tensor, lse: torch.Tensor, g: torch.Tensor,
    scale: float, need: list[bool],
) -> list[torch.Tensor]:  # fmt: skip
    """The gradients of q, k and v that ``need`` asks for, in that order (the others are not formed)."""
    grads = [torch.empty_like(t) for t, n in zip((q, k, v), need) if n]
    it = iter(grads)
    dq, dk, dv = (next(it) if n else None for n in need)
    _library().lloyd_attn_bwd(
        _ptr(q), _ptr(k), _ptr(v), _ptr(out), _ptr(lse), _ptr(g), _ptr(dq), _ptr(dk), _ptr(dv),
        *_sizes(q, k, v), ctypes.c_float(scale), ctypes.c_int(torch.get_num_threads()),
    )  # fmt: skip
    return grads


@_backward.register_fake
def _(q, k, v, out, lse, g, scale, need):
    return [torch.empty_like(t) for t, n in zip((q, k, v), need) if n]


def _setup(ctx, inputs, output):
    q, k, v, scale = inputs
    out, lse = output
    ctx.save_for_backward(q, k, v, out, lse)
    ctx.scale = scale


def _grad(ctx, g_out, g_lse):
    q, k, v, out, lse = ctx.saved_tensors
    need = list(ctx.needs_input_grad[:3])
    it = iter(_backward(q, k, v, out, lse, g_out.contiguous(), ctx.scale, need))
    return (*(next(it) if n else None for n in need), None)


_forward.register_autograd(_grad, setup_context=_setup)


def fused_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, scale: float) -> torch.Tensor:
    """softmax(scale * q k^T) v for float32 CPU tensors q (batch, m, e), k (batch, m', e), v (batch, m', f)
    -> (batch, m, f), with 2 <= e <= :data:`MAX_WIDTH` and f = e - 1; differentiable in q, k and v (the backward forms only
    the gradients asked for). No shape checks beyond the kernel's own limits: the caller
    (:func:`lloydlib.attention.cpu_attention`) checks; call :func:`available` first."""
    if not 2 <= q.shape[2] <= MAX_WIDTH or v.shape[2] != q.shape[2] - 1:
        raise ValueError(
            f"q must be 2 to {MAX_WIDTH} wide and v one narrower (head 2's [x ; 1] and x), got {q.shape[2]} and "
            f"{v.shape[2]}"
        )
    return _forward(q.contiguous(), k.contiguous(), v.contiguous(), float(scale))[0]
