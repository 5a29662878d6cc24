package worker

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// writeWorker puts an embedded worker in dir under a name derived from
// its content, so daemons of different versions never overwrite each
// other's worker while sessions run it.
func writeWorker(dir, name string, source []byte) (string, error) {
	sum := sha256.Sum256(source)
	ext := filepath.Ext(name)
	path := filepath.Join(dir, strings.TrimSuffix(name, ext)+"-"+hex.EncodeToString(sum[:6])+ext)
	if b, err := os.ReadFile(path); err == nil && bytes.Equal(b, source) {
		return path, nil
	}
	tmp, err := os.CreateTemp(dir, ".worker-*"+ext)
	if err != nil {
		return "", fmt.Errorf("cannot write the %s worker into %s: %w", name, dir, err)
	}
	_, werr := tmp.Write(source)
	cerr := tmp.Close()
	if werr != nil || cerr != nil {
		os.Remove(tmp.Name())
		return "", fmt.Errorf("cannot write the %s worker into %s: %w", name, dir, errors.Join(werr, cerr))
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		os.Remove(tmp.Name())
		return "", fmt.Errorf("cannot write the %s worker into %s: %w", name, dir, err)
	}
	return path, nil
}

func closeAll(fs ...*os.File) {
	for _, f := range fs {
		f.Close()
	}
}
