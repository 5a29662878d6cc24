package driver

import (
	"bytes"
	"image"
	"image/jpeg"
	"image/png"
	"os"
	"path/filepath"
	"testing"
)

// A PNG's size is read from its header only when the header is a PNG's:
// garbage after the signature once read as 2550338678×680730779.
func TestPNGSize(t *testing.T) {
	var good, photo bytes.Buffer
	png.Encode(&good, image.NewGray(image.Rect(0, 0, 640, 480)))
	jpeg.Encode(&photo, image.NewGray(image.Rect(0, 0, 64, 48)), nil)
	garbage := append([]byte("\x89PNG\r\n\x1a\n\x00\x00\x00\x0dIHDR"), 0x98, 0x01, 0xf6, 0x76, 0x28, 0x92, 0x6f, 0x9b, 8, 0, 0, 0, 0, 1, 2, 3, 4)
	dir := t.TempDir()
	for _, c := range []struct {
		name string
		data []byte
		w, h int
	}{
		{"a PNG", good.Bytes(), 640, 480},
		{"a garbage header", garbage, 0, 0},
		{"a JPEG", photo.Bytes(), 0, 0},
		{"a cut header", good.Bytes()[:20], 0, 0},
	} {
		p := filepath.Join(dir, "x.png")
		os.WriteFile(p, c.data, 0o600)
		if w, h := PNGSize(p); w != c.w || h != c.h {
			t.Errorf("%s: %d×%d, want %d×%d", c.name, w, h, c.w, c.h)
		}
	}
	if w, h := PNGSize(filepath.Join(dir, "none.png")); w != 0 || h != 0 {
		t.Errorf("a missing file: %d×%d", w, h)
	}
}
