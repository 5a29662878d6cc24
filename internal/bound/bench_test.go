package bound

import (
	"bytes"
	"math/rand/v2"
	"os"
	"strings"
	"testing"
	"time"
)

func BenchmarkSinkSmall(b *testing.B) {
	s := NewSink(30000, b.TempDir(), "bench-*")
	p := []byte("hello, world: 12345\n")
	b.SetBytes(int64(len(p)))
	b.ReportAllocs()
	for b.Loop() {
		s.Write(p)
		if _, cut, err := s.Take(); cut != nil || err != nil {
			b.Fatal(cut, err)
		}
	}
}

func BenchmarkSinkLarge(b *testing.B) {
	const total = 100 << 20
	const piece = 64 << 10
	for _, bc := range []struct {
		name string
		unit []byte
	}{
		{"ascii", []byte("step 12345: loss=0.123456 acc=0.987654 lr=1e-4\n")},
		{"mixed", mixedText(rand.New(rand.NewPCG(1, 1)), 4096)},
	} {
		b.Run(bc.name, func(b *testing.B) {
			chunk := bytes.Repeat(bc.unit, piece/len(bc.unit)+1)[:piece]
			dir := b.TempDir()
			s := NewSink(30000, dir, "bench-*")
			b.SetBytes(total)
			b.ReportAllocs()
			var writing time.Duration // in Write only, without Take's sync
			for b.Loop() {
				start := time.Now()
				for range total / piece {
					s.Write(chunk)
				}
				writing += time.Since(start)
				_, cut, err := s.Take()
				if err != nil || cut == nil {
					b.Fatal(cut, err)
				}
				os.Remove(cut.File)
			}
			b.ReportMetric(float64(total)*float64(b.N)/1e6/writing.Seconds(), "write-MB/s")
		})
	}
}

func BenchmarkHeadTail(b *testing.B) {
	for _, bc := range []struct {
		name string
		s    string
	}{
		{"fits", strings.Repeat("hello wörld\n", 1000)},
		{"1MB", strings.Repeat("hello wörld 中文 😀\n", 1<<20/26)},
		{"1MB invalid", strings.Repeat("hello\xffwörld\n", 1<<20/13)},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.SetBytes(int64(len(bc.s)))
			b.ReportAllocs()
			for b.Loop() {
				HeadTail(bc.s, 30000)
			}
		})
	}
}

// BenchmarkCounter measures rune counting alone, the part of Write that is
// not a copy or a system call.
func BenchmarkCounter(b *testing.B) {
	for _, bc := range []struct {
		name string
		p    []byte
	}{
		{"ascii", bytes.Repeat([]byte("step 12345: loss=0.123456\n"), 2521)},
		{"mixed", mixedText(rand.New(rand.NewPCG(2, 2)), 64<<10)},
		{"invalid", bytes.Repeat([]byte("ab\xff\x80cd"), 64<<10/6)},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.SetBytes(int64(len(bc.p)))
			var c counter
			for b.Loop() {
				c.add(bc.p)
			}
		})
	}
}
