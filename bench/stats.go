package main

import (
	"fmt"
	"math"
	"slices"
	"time"
)

// series is one row's samples, one per repetition; NaN where a repetition
// has none (the row failed or was skipped then).
type series []float64

func (s series) valid() []float64 {
	var v []float64
	for _, x := range s {
		if !math.IsNaN(x) {
			v = append(v, x)
		}
	}
	return v
}

func (s series) n() int { return len(s.valid()) }

// quantile is the nearest-rank q-quantile, NaN without samples.
func quantile(xs []float64, q float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	v := slices.Clone(xs)
	slices.Sort(v)
	i := int(math.Ceil(q*float64(len(v)))) - 1
	return v[min(max(i, 0), len(v)-1)]
}

func (s series) median() float64 { return quantile(s.valid(), 0.5) }
func (s series) p99() float64    { return quantile(s.valid(), 0.99) }
func (s series) max() float64    { return quantile(s.valid(), 1) }

// pairedRatio is the median over repetitions of a[i]/b[i], counting only
// repetitions where both rows have a sample: measured side by side, each
// pair shares the machine's state of that moment.
func pairedRatio(a, b series) float64 {
	var r []float64
	for i := range min(len(a), len(b)) {
		if !math.IsNaN(a[i]) && !math.IsNaN(b[i]) && b[i] > 0 {
			r = append(r, a[i]/b[i])
		}
	}
	return quantile(r, 0.5)
}

// pairedDiff is the median over repetitions of a[i]-b[i], side by side
// as pairedRatio: what one route adds to another.
func pairedDiff(a, b series) float64 {
	var r []float64
	for i := range min(len(a), len(b)) {
		if !math.IsNaN(a[i]) && !math.IsNaN(b[i]) {
			r = append(r, a[i]-b[i])
		}
	}
	return quantile(r, 0.5)
}

// fmtDur prints seconds as a duration a person reads at a glance.
func fmtDur(sec float64) string {
	switch {
	case math.IsNaN(sec):
		return "–"
	case sec < 1e-3:
		return fmt.Sprintf("%.0f µs", sec*1e6)
	case sec < 10e-3:
		return fmt.Sprintf("%.2f ms", sec*1e3)
	case sec < 1:
		return fmt.Sprintf("%.1f ms", sec*1e3)
	default:
		return fmt.Sprintf("%.2f s", sec)
	}
}

func fmtRatio(r float64) string {
	switch {
	case math.IsNaN(r):
		return "–"
	case r >= 100:
		return fmt.Sprintf("%.0f×", r)
	case r >= 10:
		return fmt.Sprintf("%.1f×", r)
	default:
		return fmt.Sprintf("%.2f×", r)
	}
}

func fmtMB(b float64) string {
	if math.IsNaN(b) {
		return "–"
	}
	return fmt.Sprintf("%.1f MB", b/1e6)
}

func secs(d time.Duration) float64 { return d.Seconds() }

func nanSeries(n int) series {
	s := make(series, n)
	for i := range s {
		s[i] = math.NaN()
	}
	return s
}
