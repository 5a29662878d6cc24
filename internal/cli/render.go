package cli

import (
	"encoding/json"
	"fmt"
	"io"

	"github.com/polyrepl/polyrepl/internal/api"
)

// exitFor maps a cell status to the exit status.
func exitFor(status string) int {
	switch status {
	case api.StatusDone:
		return ExitOK
	case api.StatusRunning:
		return ExitTimeout
	case api.StatusInput:
		return ExitInput
	}
	return ExitFailed
}

func printJSON(w io.Writer, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		fmt.Fprintf(w, "{\"error\": %q}\n", err.Error())
		return
	}
	w.Write(append(b, '\n'))
}
