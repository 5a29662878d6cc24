package sandbox

// seccompArch is AUDIT_ARCH_AARCH64.
const (
	seccompArch = 0xc00000b7
	seccompX32  = false
)
