package lot

import (
	"errors"
	"math"
	"slices"
	"sync"

	"gonum.org/v1/gonum/mathext"
	"gonum.org/v1/gonum/stat/distuv"
)

// NoncentralTCDF is P(T ≤ t) for T noncentral t with df degrees of
// freedom and noncentrality delta. gonum has no noncentral t, so it is
// computed as the Poisson mixture of regularized incomplete beta
// functions,
//
//	F(t) = Φ(−δ) + ½ Σⱼ [Pⱼ·I_x(j + ½, ν/2) + (δ/√2)·Qⱼ·I_x(j + 1, ν/2)],
//	Pⱼ = e^(−λ) λʲ / j!,  Qⱼ = e^(−λ) λʲ / Γ(j + 3/2),  λ = δ²/2,  x = t²/(t² + ν),
//
// for t ≥ 0 (and F(t; ν, δ) = 1 − F(−t; ν, −δ) below 0), summed from the
// Poisson mode outward as Benton and Krishnamoorthy (2003) do: the two
// incomplete betas are evaluated once at the mode and stepped by their
// recurrences, so that a large δ (λ in the thousands for a sample of
// thousands) neither underflows the weights, as the forward sum of Lenth's
// AS 243 does, nor costs an incomplete beta per term. Terms are summed
// over the mode ± 10 √λ + 15, beyond which the Poisson weights sum to
// less than 1e-20.
func NoncentralTCDF(t, df, delta float64) float64 {
	if math.IsNaN(t) || math.IsNaN(df) || math.IsNaN(delta) || df <= 0 {
		return math.NaN()
	}
	if math.IsInf(t, 1) {
		return 1
	}
	if math.IsInf(t, -1) {
		return 0
	}
	if t < 0 {
		return 1 - NoncentralTCDF(-t, df, -delta)
	}
	base := distuv.UnitNormal.CDF(-delta)
	if t == 0 {
		return base
	}
	x := t * t / (t*t + df)
	lx, l1x := math.Log(x), math.Log(df/(t*t+df)) // ln x, ln(1 − x) without cancellation
	b := df / 2
	lam := delta * delta / 2
	if lam == 0 {
		return clamp01(base + 0.5*mathext.RegIncBeta(0.5, b, x))
	}
	llam := math.Log(lam)
	lgb, _ := math.Lgamma(b)
	// g(a) = Γ(a + b) / (Γ(a + 1) Γ(b)) xᵃ (1 − x)ᵇ, so that
	// I_x(a + 1, b) = I_x(a, b) − g(a).
	g := func(a float64) float64 {
		lab, _ := math.Lgamma(a + b)
		la1, _ := math.Lgamma(a + 1)
		return math.Exp(lab - la1 - lgb + a*lx + b*l1x)
	}
	weights := func(j int) (p, q float64) {
		fj := float64(j)
		lj1, _ := math.Lgamma(fj + 1)
		lj32, _ := math.Lgamma(fj + 1.5)
		return math.Exp(-lam + fj*llam - lj1), math.Exp(-lam + fj*llam - lj32)
	}
	sq := delta / math.Sqrt2
	mode := int(lam)
	span := int(10*math.Sqrt(lam)) + 15
	a0, c0 := float64(mode)+0.5, float64(mode)+1
	ia0, ic0 := mathext.RegIncBeta(a0, b, x), mathext.RegIncBeta(c0, b, x)
	var sum float64
	// From the mode up.
	ia, ic := ia0, ic0
	for j := mode; j <= mode+span; j++ {
		p, q := weights(j)
		sum += p*max(ia, 0) + sq*q*max(ic, 0)
		a, c := float64(j)+0.5, float64(j)+1
		ia -= g(a)
		ic -= g(c)
		if ia <= 0 && ic <= 0 {
			break
		}
	}
	// From below the mode down to 0.
	ia, ic = ia0, ic0
	for j := mode - 1; j >= 0 && j >= mode-span; j-- {
		a, c := float64(j)+0.5, float64(j)+1
		ia += g(a)
		ic += g(c)
		p, q := weights(j)
		sum += p*min(ia, 1) + sq*q*min(ic, 1)
	}
	return clamp01(base + 0.5*sum)
}

func clamp01(f float64) float64 { return min(max(f, 0), 1) }

// ShapiroWilk is the Shapiro–Wilk W statistic of xs and its p-value under
// normality, by Royston's algorithm (AS R94, 1995; the one R's
// shapiro.test uses): coefficients from the normal scores with Royston's
// polynomial corrections, exact p for n = 3, and his normalizing
// transformations of W for 4 ≤ n ≤ 11 and n ≥ 12. It needs 3 to 5000
// figures that are not all equal.
func ShapiroWilk(xs []float64) (w, p float64, err error) {
	n := len(xs)
	if n < 3 || n > MaxShapiroWilk {
		return 0, 0, errors.New("lot: Shapiro–Wilk needs 3 to 5000 figures")
	}
	x := slices.Clone(xs)
	slices.Sort(x)
	if x[n-1]-x[0] <= 0 {
		return 0, 0, errors.New("lot: Shapiro–Wilk needs figures that are not all equal")
	}
	fn := float64(n)
	nn2 := n / 2
	a := swCoefficients(n)
	mean := 0.0
	for _, v := range x {
		mean += v
	}
	mean /= fn
	var ss, num float64
	for _, v := range x {
		ss += (v - mean) * (v - mean)
	}
	for i := 1; i <= nn2; i++ {
		num += a[i] * (x[n-i] - x[i-1])
	}
	w = min(num*num/ss, 1)
	if n == 3 {
		const pi6, stqr = 6 / math.Pi, math.Pi / 3 // 6/π, asin(√(3/4))
		return w, max(pi6*(math.Asin(math.Sqrt(w))-stqr), 0), nil
	}
	w1 := 1 - w
	if w1 <= 0 {
		return w, 1, nil
	}
	y := math.Log(w1)
	var mu, sigma float64
	if n <= 11 {
		gamma := poly([]float64{-2.273, 0.459}, fn)
		if y >= gamma {
			return w, 1e-99, nil
		}
		y = -math.Log(gamma - y)
		mu = poly([]float64{0.544, -0.39978, 0.025054, -6.714e-4}, fn)
		sigma = math.Exp(poly([]float64{1.3822, -0.77857, 0.062767, -0.0020322}, fn))
	} else {
		lx := math.Log(fn)
		mu = poly([]float64{-1.5861, -0.31082, -0.083751, 0.0038915}, lx)
		sigma = math.Exp(poly([]float64{-0.4803, -0.082676, 0.0030302}, lx))
	}
	return w, distuv.Normal{Mu: mu, Sigma: sigma}.Survival(y), nil
}

// swCache holds Shapiro–Wilk's coefficients by n: they depend on n alone,
// and a run (or a simulation) tests many samples of one size.
var swCache sync.Map // int → []float64

// swCoefficients are Royston's coefficients a[1..n/2] for n figures, for
// x[n−i] − x[i−1] of the sorted figures.
func swCoefficients(n int) []float64 {
	if a, ok := swCache.Load(n); ok {
		return a.([]float64)
	}
	fn := float64(n)
	nn2 := n / 2
	a := make([]float64, nn2+1)
	if n == 3 {
		a[1] = math.Sqrt(0.5)
	} else {
		m := make([]float64, nn2+1)
		var summ2 float64
		for i := 1; i <= nn2; i++ {
			m[i] = distuv.UnitNormal.Quantile((float64(i) - 0.375) / (fn + 0.25))
			summ2 += m[i] * m[i]
		}
		summ2 *= 2
		ssumm2 := math.Sqrt(summ2)
		rsn := 1 / math.Sqrt(fn)
		a1 := poly([]float64{0, 0.221157, -0.147981, -2.07119, 4.434685, -2.706056}, rsn) - m[1]/ssumm2
		i1 := 2
		var fac float64
		if n > 5 {
			i1 = 3
			a2 := -m[2]/ssumm2 + poly([]float64{0, 0.042981, -0.293762, -1.752461, 5.682633, -3.582633}, rsn)
			fac = math.Sqrt((summ2 - 2*m[1]*m[1] - 2*m[2]*m[2]) / (1 - 2*a1*a1 - 2*a2*a2))
			a[2] = a2
		} else {
			fac = math.Sqrt((summ2 - 2*m[1]*m[1]) / (1 - 2*a1*a1))
		}
		a[1] = a1
		for i := i1; i <= nn2; i++ {
			a[i] = -m[i] / fac
		}
	}
	swCache.Store(n, a)
	return a
}

// poly is c[0] + c[1]·x + c[2]·x² + ….
func poly(c []float64, x float64) float64 {
	var r float64
	for i := len(c) - 1; i >= 0; i-- {
		r = r*x + c[i]
	}
	return r
}
