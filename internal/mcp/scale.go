package mcp

import (
	"bytes"
	"fmt"
	"image"
	"image/jpeg"
	"image/png"

	"golang.org/x/image/draw"
)

// fitImage makes an image small enough for a model to take: at most side
// pixels on its long side and budget bytes, scaled down (never up) and
// encoded as PNG, or as JPEG where that is what fits. It returns the
// bytes, their MIME type and the new size; the file keeps the original.
func fitImage(data []byte, side, budget int) ([]byte, string, image.Point, error) {
	src, _, err := image.Decode(bytes.NewReader(data))
	if err != nil {
		return nil, "", image.Point{}, fmt.Errorf("cannot read the image: %w", err)
	}
	size := src.Bounds().Size()
	for attempt := 0; attempt < 4; attempt++ {
		w, h := size.X, size.Y
		if long := max(w, h); long > side {
			w, h = max(1, w*side/long), max(1, h*side/long)
		}
		img := image.Image(src)
		if w != size.X || h != size.Y {
			dst := image.NewRGBA(image.Rect(0, 0, w, h))
			draw.CatmullRom.Scale(dst, dst.Bounds(), src, src.Bounds(), draw.Src, nil)
			img = dst
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
	return nil, "", image.Point{}, fmt.Errorf("the image does not fit in %d KB even scaled down", budget/1000)
}
