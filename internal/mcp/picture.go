package mcp

import (
	"bufio"
	"bytes"
	"fmt"
	"image"
	"image/color"
	_ "image/gif" // a GIF is read, as a model takes one
	"image/jpeg"
	"image/png"
	"io"
	"os"

	"golang.org/x/image/draw"
	"golang.org/x/image/math/f64"
)

// What the server spends on one image it sends: an image is decoded
// only when what its header says decoding takes fits decodeLimit — a
// 3.5 MB PNG can say 60000×60000 pixels, 3.4 GB decoded — and its file
// is read whole only up to readLimit. Past them it is described, its
// file named, and not sent. The limit lets a 50-megapixel RGB image
// (200 MB as Go decodes it) be scaled down and seen. One image is
// decoded at a time.
const (
	decodeLimit = 256 << 20
	readLimit   = 64 << 20
)

// imageFacts is what an image's header says, checked: what the bytes
// are, whatever a runtime called them.
type imageFacts struct {
	Format        string // "png", "jpeg", "gif"; "" if not an image this server reads
	Width, Height int
	Decoded       int64  // bytes decoding it takes, by its header
	Corrupt       string // why it is no readable image ("" if its header is one)
}

// mime is the image's MIME type by its bytes.
func (f imageFacts) mime() string { return "image/" + f.Format }

// inspectImage reads the header of the image in r, and no more than it
// takes: its format, its size, and what decoding it would take.
func inspectImage(r io.ReadSeeker) imageFacts {
	br := bufio.NewReader(r)
	head, _ := br.Peek(8)
	cfg, format, err := image.DecodeConfig(br)
	if err != nil {
		return imageFacts{Format: sniff(head), Corrupt: quoteCut(err.Error(), quoted)}
	}
	f := imageFacts{Format: format, Width: cfg.Width, Height: cfg.Height}
	if cfg.Width <= 0 || cfg.Height <= 0 {
		f.Corrupt = fmt.Sprintf("its header says %d×%d pixels", cfg.Width, cfg.Height)
		return f
	}
	if _, err := r.Seek(0, io.SeekStart); err != nil {
		f.Corrupt = quoteCut(err.Error(), quoted)
		return f
	}
	f.Decoded = int64(cfg.Width) * int64(cfg.Height) * perPixel(format, cfg.ColorModel, bufio.NewReader(r))
	return f
}

// sniff names the format whose signature starts head, "" if none does.
func sniff(head []byte) string {
	switch {
	case bytes.HasPrefix(head, []byte("\x89PNG\r\n\x1a\n")):
		return "png"
	case bytes.HasPrefix(head, []byte{0xff, 0xd8}):
		return "jpeg"
	case bytes.HasPrefix(head, []byte("GIF8")):
		return "gif"
	}
	return ""
}

// inspectFile reads the header of the image file path.
func inspectFile(path string) (imageFacts, error) {
	fh, err := os.Open(path)
	if err != nil {
		return imageFacts{}, err
	}
	defer fh.Close()
	return inspectImage(fh), nil
}

// perPixel is how many bytes a pixel takes while Go's decoder of format
// decodes it (r: the image from its start), counted high: the decoded
// image, and what the decoder keeps besides (a progressive JPEG's
// coefficients, an interlaced PNG's passes).
func perPixel(format string, m color.Model, r *bufio.Reader) int64 {
	switch format {
	case "png":
		var n int64
		switch m {
		case color.GrayModel:
			n = 1
		case color.Gray16Model:
			n = 2
		case color.RGBAModel, color.NRGBAModel:
			n = 4
		default:
			if _, ok := m.(color.Palette); ok {
				n = 1
			} else {
				n = 8 // 16 bits a sample, with alpha
			}
		}
		if head, err := r.Peek(29); err == nil && head[28] != 0 {
			n = (3*n + 1) / 2 // Adam7: the passes, then the image
		}
		return n
	case "jpeg":
		comps := int64(3)
		switch m {
		case color.GrayModel:
			comps = 1
		case color.CMYKModel:
			comps = 4
		}
		n := comps + 4 // the components, and an RGBA an Adobe transform makes
		if jpegProgressive(r) {
			n += 4 * comps // a block of 64 int32 per 8×8 pixels per component
		}
		return n
	}
	return 1 // gif: a paletted frame
}

// jpegProgressive says whether a JPEG's frame is progressive, by the
// marker that starts it; true when it cannot tell (the higher count).
func jpegProgressive(r *bufio.Reader) bool {
	var soi [2]byte
	if _, err := io.ReadFull(r, soi[:]); err != nil || soi != [2]byte{0xff, 0xd8} {
		return true
	}
	for {
		c, err := r.ReadByte()
		if err != nil {
			return true
		}
		if c != 0xff {
			continue
		}
		m, err := r.ReadByte()
		for err == nil && m == 0xff {
			m, err = r.ReadByte()
		}
		switch {
		case err != nil || m == 0xd9 || m == 0xda: // the end, or the scan, before a frame
			return true
		case m == 0x00 || m == 0x01 || m == 0xd8 || (m >= 0xd0 && m <= 0xd7): // no segment
			continue
		case m >= 0xc0 && m <= 0xcf && m != 0xc4 && m != 0xc8 && m != 0xcc:
			return m != 0xc0 && m != 0xc1 // baseline and extended sequential keep no coefficients
		}
		var n [2]byte
		if _, err := io.ReadFull(r, n[:]); err != nil {
			return true
		}
		if _, err := r.Discard(max(int(n[0])<<8|int(n[1])-2, 0)); err != nil {
			return true
		}
	}
}

// decodeImage decodes data, whose header inspectImage found within
// decodeLimit; an error says it is corrupt.
func decodeImage(data []byte) (image.Image, error) {
	img, _, err := image.Decode(bytes.NewReader(data))
	return img, err
}

// fitImage makes an image small enough for a model to take: at most side
// pixels on its long side and budget bytes, scaled down (never up) and
// encoded as PNG, or as JPEG where that is what fits. It returns the
// bytes, their MIME type and the new size; the file keeps the original.
func fitImage(src image.Image, side, budget int) ([]byte, string, image.Point, error) {
	size := src.Bounds().Size()
	for attempt := 0; attempt < 4; attempt++ {
		w, h := size.X, size.Y
		if long := max(w, h); long > side {
			w, h = max(1, w*side/long), max(1, h*side/long)
		}
		img := src
		if w != size.X || h != size.Y {
			img = scaleImage(src, w, h)
		}
		var b bytes.Buffer
		if err := png.Encode(&b, img); err == nil && b.Len() <= budget {
			return b.Bytes(), "image/png", image.Pt(w, h), nil
		}
		b.Reset()
		if err := jpeg.Encode(&b, img, &jpeg.Options{Quality: 85}); err == nil && b.Len() <= budget {
			return b.Bytes(), "image/jpeg", image.Pt(w, h), nil
		}
		side = max(w, h) * 2 / 3 // still too big: smaller
	}
	return nil, "", image.Point{}, errOverBudget
}

var errOverBudget = fmt.Errorf("the image does not fit the reply's budget even scaled down")

// scaleImage scales src to w×h with the Catmull-Rom kernel. As a
// transform, not draw's Scale: Scale keeps w × the source's height ×
// 32 bytes besides (480 MB to bring 10000×10000 pixels to 1568), the
// transform nothing, for the same pixels in the same time.
func scaleImage(src image.Image, w, h int) image.Image {
	sb := src.Bounds()
	dst := image.NewRGBA(image.Rect(0, 0, w, h))
	sx, sy := float64(w)/float64(sb.Dx()), float64(h)/float64(sb.Dy())
	s2d := f64.Aff3{sx, 0, -float64(sb.Min.X) * sx, 0, sy, -float64(sb.Min.Y) * sy}
	draw.CatmullRom.Transform(dst, s2d, src, sb, draw.Src, nil)
	return dst
}
