# SPDX-License-Identifier: GPL-3.0-or-later
"""What each job's 95 % interval is made of, from a kept work directory of
tests/accuracy/run.sh (KEEP=1; docs/accuracy.md, "Per-job intervals"):

  python3 tests/accuracy/unc_terms.py WORK

Per job (its archive's cells with a value, idle_policy = separate, so a
job's part of the dynamic power F = watts / dynamic): the sd that adds
linearly split into the idle's (F sigma(beta0) a cell) and the rest (the
coefficients: the stored sd's remainder in quadrature), the variance split
into the reading noise's (F^2 sigma_n^2), the meter's quantum and lag
(F^2 x the node's: its dynamic_unc variance less the noise, where a node
has F = 1 and no misfit), the misfit's (the rest) — each as the sd in J it
gives over the job's cells — and the half-width
1.96 sqrt(SD^2 + VAR) with each part's share of SD^2 + VAR (the linear
parts' shares by their part of SD). `misfit (old)` is what the per-cell
term tau F(1 - F) min(sigma_r, D)^2 of erg before git errbars6 gives on
the same cells, and `before` the relative width (2 x half-width / E) with
it in place of the misfit; the last line the medians of the relative widths."""
import glob, json, math, os, re, sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from truth import rrd  # noqa: E402

Z95 = 1.959964


def t975(df):
    """Student's t_{0.975, df} (bisection on the CDF by Simpson's rule)."""
    c = math.gamma((df + 1) / 2) / (math.sqrt(df * math.pi) * math.gamma(df / 2))
    pdf = lambda x: c * (1 + x * x / df) ** (-(df + 1) / 2)

    def cdf(x, n=2000):
        h = x / n
        s = pdf(0) + pdf(x) + sum((4 if i % 2 else 2) * pdf(i * h) for i in range(1, n))
        return 0.5 + s * h / 3

    lo, hi = 0.0, 100.0
    for _ in range(60):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if cdf(mid) < 0.975 else (lo, mid)
    return (lo + hi) / 2


work = sys.argv[1]
print("| job | E (J) | half-width (J) | idle sd (J) | coefficients sd (J) | noise sd (J) "
      "| meter+lag sd (J) | misfit sd (J) | misfit (old) sd (J) | shares idle/coef/noise/meter+misfit "
      "| relative width | before |")
print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
rel, rel_old = [], []
for jf in sorted(glob.glob(f"{work}/n*-job*.txt")):
    node, job = re.match(r".*/(n\d+)-(job\w+)\.txt$", jf).groups()
    m = json.load(open(f"{work}/models/{node}.json"))
    cov = m.get("coefficient_covariance") or {}
    var_b0 = cov["matrix"][0][0] if cov else 0
    tau = cov.get("misfit_correlation_cells", 1) or 1
    ip = m.get("idle_profile") or {}
    n = ip.get("cells", 0)
    sig_n = ip["stddev_watts"] * math.sqrt(n / (n - 1)) * t975(n - 1) / Z95 if n > 1 else \
        m["validation"]["rmse_watts"]
    sig_r = m["validation"]["rmse_watts"]
    node_rows = rrd(f"{work}/node-{node}.txt")
    dyn_rows = rrd(f"{work}/node-{node}.dyn.txt")
    step = m.get("step_seconds", 2)
    idle = sd_rest = v_noise = v_all = v_old = v_ml = e = 0.0
    for t, r in rrd(jf).items():
        w, sd, var = r.get("watts", math.nan), r.get("sd", math.nan), r.get("var", math.nan)
        d = node_rows.get(t, {}).get("dynamic", math.nan)
        if math.isnan(w) or math.isnan(sd) or math.isnan(d) or d <= 0:
            continue
        f = min(max(w / d, 0), 1)
        e += w * step
        a = f * math.sqrt(var_b0)
        idle += a * step
        sd_rest += math.sqrt(max(sd * sd - a * a, 0)) * step
        v_noise += f * f * sig_n * sig_n * step * step
        v_all += var * step  # var: W^2 x step
        nv = dyn_rows.get(t, {}).get("var", math.nan)
        if not math.isnan(nv):
            v_ml += f * f * max(nv / step - sig_n * sig_n, 0) * step * step
        v_old += tau * f * (1 - f) * min(sig_r, d) ** 2 * step * step
    v_rest = max(v_all - v_noise - v_ml, 0)
    SD = idle + sd_rest
    tot = SD * SD + v_all
    half = Z95 * math.sqrt(tot)
    sh = [SD * idle / tot, SD * sd_rest / tot, v_noise / tot, (v_ml + v_rest) / tot] if tot > 0 else [0] * 4
    half_old = Z95 * math.sqrt(SD * SD + v_noise + v_ml + v_old)
    if e > 0:
        rel.append(2 * half / e)
        rel_old.append(2 * half_old / e)
    print(f"| {node} {job} | {e:.0f} | {half:.1f} | {idle:.2f} | {sd_rest:.2f} | {math.sqrt(v_noise):.2f} "
          f"| {math.sqrt(v_ml):.2f} | {math.sqrt(v_rest):.2f} | {math.sqrt(v_old):.2f} | "
          + "/".join(f"{x:.2f}" for x in sh) +
          (f" | {2 * half / e:.4f} | {2 * half_old / e:.4f} |" if e > 0 else " | - | - |"))
if rel:
    med = lambda v: sorted(v)[len(v) // 2]
    print(f"median relative width {med(rel):.4f} (before: {med(rel_old):.4f}) over {len(rel)} jobs")
