//go:build linux && !amd64 && !arm64

package sandbox

// No filter here: Landlock alone governs the network (TCP).
const (
	seccompArch = 0
	seccompX32  = false
)
