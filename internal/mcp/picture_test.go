package mcp

import (
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"hash/crc32"
	"image"
	"image/jpeg"
	"image/png"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/polyrepl/polyrepl/internal/api"
)

// pngChunk is one PNG chunk: length, type, data, CRC.
func pngChunk(typ string, data []byte) []byte {
	var b bytes.Buffer
	binary.Write(&b, binary.BigEndian, uint32(len(data)))
	b.WriteString(typ)
	b.Write(data)
	binary.Write(&b, binary.BigEndian, crc32.ChecksumIEEE(append([]byte(typ), data...)))
	return b.Bytes()
}

// craftPNG is a grayscale PNG whose header says w×h and whose pixel
// data are rows zero rows of it, compressed: a few KB that claim
// gigabytes (a decompression bomb), or a valid image when rows = h.
func craftPNG(w, h, rows int, interlaced bool) []byte {
	ihdr := make([]byte, 13)
	binary.BigEndian.PutUint32(ihdr[0:], uint32(w))
	binary.BigEndian.PutUint32(ihdr[4:], uint32(h))
	ihdr[8], ihdr[9] = 8, 0 // 8 bits, grayscale
	if interlaced {
		ihdr[12] = 1
	}
	var z bytes.Buffer
	zw, _ := zlib.NewWriterLevel(&z, zlib.BestCompression)
	row := make([]byte, w+1)
	for range rows {
		zw.Write(row)
	}
	zw.Close()
	out := []byte("\x89PNG\r\n\x1a\n")
	out = append(out, pngChunk("IHDR", ihdr)...)
	out = append(out, pngChunk("IDAT", z.Bytes())...)
	return append(out, pngChunk("IEND", nil)...)
}

func testPNG(w, h int) []byte {
	img := image.NewNRGBA(image.Rect(0, 0, w, h))
	for i := range img.Pix {
		img.Pix[i] = byte(i * 31)
	}
	var b bytes.Buffer
	png.Encode(&b, img)
	return b.Bytes()
}

func testJPEG(w, h int, progressive bool) []byte {
	img := image.NewGray(image.Rect(0, 0, w, h))
	for i := range img.Pix {
		img.Pix[i] = byte(i)
	}
	var b bytes.Buffer
	jpeg.Encode(&b, img, nil)
	data := b.Bytes()
	if progressive {
		// Go writes baseline only: mark the frame progressive (SOF2)
		// to test the count, not the decoding.
		i := bytes.Index(data, []byte{0xff, 0xc0})
		data = bytes.Clone(data)
		data[i+1] = 0xc2
	}
	return data
}

// Images are read by their header, and decoded only when it says they
// fit decodeLimit: a bomb is described from its header, a corrupt image
// is called corrupt, a JPEG is a JPEG whatever the runtime called it
// (issue 33 item 5).
func TestInspectImage(t *testing.T) {
	bomb := craftPNG(60000, 60000, 10, false)
	garbage := append([]byte("\x89PNG\r\n\x1a\n\x00\x00\x00\x0dIHDR"), bytes.Repeat([]byte{0x98, 0x01, 0xf6, 0x76, 0x28, 0x92, 0x6f, 0x9b}, 20)...)
	goodPNG := testPNG(300, 200)
	badPNG := bytes.Clone(goodPNG)
	badPNG[len(badPNG)/2] ^= 0xff // the pixel data's checksum fails
	truncPNG := goodPNG[:len(goodPNG)*2/3]
	goodJPEG := testJPEG(320, 240, false)
	badJPEG := append([]byte{0xff, 0xd8, 0xff, 0xe0, 0x00, 0x10}, bytes.Repeat([]byte("not a jpeg "), 40)...)
	for _, c := range []struct {
		name    string
		data    []byte
		format  string
		w, h    int
		corrupt bool // by its header
		huge    bool // over decodeLimit
		decodes bool
	}{
		{"valid PNG", goodPNG, "png", 300, 200, false, false, true},
		{"valid JPEG", goodJPEG, "jpeg", 320, 240, false, false, true},
		{"PNG bomb 60000×60000", bomb, "png", 60000, 60000, false, true, false},
		{"PNG 20000×20000", craftPNG(20000, 20000, 1, false), "png", 20000, 20000, false, true, false},
		{"PNG 16000×16000 gray, 256 MB", craftPNG(16000, 16000, 1, false), "png", 16000, 16000, false, false, false},
		{"interlaced PNG 16000×16000 gray", craftPNG(16000, 16000, 1, true), "png", 16000, 16000, false, true, false},
		{"corrupt PNG", badPNG, "png", 300, 200, false, false, false},
		{"truncated PNG", truncPNG, "png", 300, 200, false, false, false},
		{"corrupt JPEG", badJPEG, "jpeg", 0, 0, true, false, false},
		{"garbage PNG header", garbage, "png", 0, 0, true, false, false},
		{"not an image", []byte("hello, world"), "", 0, 0, true, false, false},
		{"empty", nil, "", 0, 0, true, false, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := inspectImage(bytes.NewReader(c.data))
			if f.Format != c.format || f.Width != c.w || f.Height != c.h || (f.Corrupt != "") != c.corrupt || (f.Decoded > decodeLimit) != c.huge {
				t.Fatalf("inspected %+v; want %s %d×%d, corrupt %v, over the decode limit %v", f, c.format, c.w, c.h, c.corrupt, c.huge)
			}
			if f.Corrupt != "" || f.Decoded > decodeLimit || len(c.data) > 1<<20 && c.format == "png" && !c.decodes {
				return
			}
			if _, err := decodeImage(c.data); (err == nil) != c.decodes {
				t.Errorf("decoding: %v; want it to decode: %v", err, c.decodes)
			}
		})
	}
}

// A progressive JPEG keeps its coefficients while it decodes: counted.
func TestJPEGCountsProgressive(t *testing.T) {
	base := inspectImage(bytes.NewReader(testJPEG(64, 64, false)))
	prog := inspectImage(bytes.NewReader(testJPEG(64, 64, true)))
	if base.Decoded != 64*64*5 || prog.Decoded != 64*64*9 {
		t.Errorf("a 64×64 gray JPEG counted %d bytes, progressive %d; want %d and %d", base.Decoded, prog.Decoded, 64*64*5, 64*64*9)
	}
}

// A PNG whose size is within the limit but whose compressed data go on
// far past its pixels (a zlib stream of 200 MB of zeros for a 16 MB
// image) takes no more than its image to decode.
func TestPNGDecodeOfLongDataIsBounded(t *testing.T) {
	data := craftPNG(4000, 4000, 50000, false)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	_, err := decodeImage(data)
	runtime.ReadMemStats(&after)
	if err == nil {
		t.Errorf("a PNG with 50000 rows of data for 4000 decoded without an error")
	}
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 40<<20 {
		t.Errorf("decoding it allocated %d MB; want about its 16 MB image", grew>>20)
	}
}

// What a reply sends and says of each kind of image.
func TestImagesReply(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	jpegAsPNG := write("a.png", testJPEG(320, 240, false))
	jpegBig := write("big.png", testJPEG(3000, 100, false))
	bomb := write("bomb.png", craftPNG(60000, 60000, 10, false))
	corrupt := write("c.jpg", append([]byte{0xff, 0xd8, 0xff, 0xe0, 0x00, 0x10}, bytes.Repeat([]byte("junk"), 50)...))
	badPNG := testPNG(100, 100)
	badPNG[len(badPNG)/2] ^= 0xff
	badData := write("d.png", badPNG)
	garbage := write("e.png", append([]byte("\x89PNG\r\n\x1a\n\x00\x00\x00\x0dIHDR"), bytes.Repeat([]byte{0x98, 0x01, 0xf6, 0x76}, 20)...))
	r := api.CellResult{Rich: []api.Rich{
		{MIME: "image/png", File: jpegAsPNG, Width: 1, Height: 1},
		{MIME: "image/png", File: bomb, Width: 60000, Height: 60000},
		{MIME: "image/jpeg", File: corrupt},
		{MIME: "image/png", File: badData, Width: 100, Height: 100},
	}}
	s := &Server{}
	req := &mcp.CallToolRequest{}
	content, rep := s.images(req, r)
	if len(content) != 1 || content[0].(*mcp.ImageContent).MIMEType != "image/jpeg" {
		t.Fatalf("sent %d blocks (%v); want the JPEG alone, as image/jpeg", len(content), content)
	}
	bigContent, bigRep := s.images(req, api.CellResult{Rich: []api.Rich{{MIME: "image/png", File: jpegBig}}})
	if len(bigContent) != 1 {
		t.Fatalf("sent %d blocks for a 3000×100 JPEG", len(bigContent))
	}
	if cfg, _, err := image.DecodeConfig(bytes.NewReader(bigContent[0].(*mcp.ImageContent).Data)); err != nil || cfg.Width != imageSide {
		t.Errorf("the 3000×100 JPEG sent as %+v (%v); want it scaled to %d wide", cfg, err, imageSide)
	}
	if said := imagesText(bigRep); !strings.Contains(said, "Scaled down for you (the file keeps the full size): image 1 to 1568×52.") {
		t.Errorf("the reply says %q of a scaled image", said)
	}
	said := imagesText(rep)
	for _, want := range []string{
		"Image 2 is a 60000×60000 PNG: decoding it would take 3433 MB, over the 256 MB an image may take here; not sent, and left as its file " + bomb,
		"Image 3 is corrupt: a JPEG that cannot be read",
		"its file is " + corrupt,
		"Image 4 is corrupt: a PNG that cannot be read (",
		"its file is " + badData,
	} {
		if !strings.Contains(said, want) {
			t.Errorf("the reply says %q; want it to say %q", said, want)
		}
	}
	if strings.Contains(said, "budget") {
		t.Errorf("the reply puts a corrupt image down to the budget: %q", said)
	}
	rich := trueRich(append(r.Rich, api.Rich{MIME: "image/png", File: garbage, Width: 2550338678 & 0x7fffffff, Height: 680730779},
		api.Rich{MIME: "image/png", File: write("f.png", []byte("text"))}))
	if rich[0].MIME != "image/jpeg" || rich[0].Width != 320 || rich[4].Width != 0 || rich[4].Height != 0 || rich[1].Width != 60000 || rich[5].MIME != "image/png" || rich[3].Width != 100 {
		t.Errorf("the images as their headers say: %+v", rich)
	}
	if r.Rich[0].MIME != "image/png" {
		t.Errorf("trueRich changed the result it was given")
	}
}

// FuzzInspectImage: whatever the bytes, reading the header ends, and
// what it lets through decodes without panicking.
func FuzzInspectImage(f *testing.F) {
	f.Add(testPNG(4, 3))
	f.Add(testJPEG(8, 8, false))
	f.Add(testJPEG(8, 8, true))
	f.Add(craftPNG(60000, 60000, 1, true))
	f.Add([]byte("GIF89a\x01\x00\x01\x00\x00\x00\x00"))
	f.Fuzz(func(t *testing.T, data []byte) {
		facts := inspectImage(bytes.NewReader(data))
		if facts.Format != "" && facts.Format != sniff(data) {
			t.Fatalf("read as %s, and its signature says %q", facts.Format, sniff(data))
		}
		if facts.Corrupt == "" && (facts.Width <= 0 || facts.Height <= 0 || facts.Format == "") {
			t.Fatalf("not corrupt, and %+v", facts)
		}
		if facts.Corrupt == "" && facts.Decoded <= 1<<20 {
			if img, err := decodeImage(data); err == nil && img.Bounds().Dx()*img.Bounds().Dy() > 0 {
				fitImage(img, 16, 1000)
			}
		}
	})
}
