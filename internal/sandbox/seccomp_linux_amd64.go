package sandbox

// seccompArch is AUDIT_ARCH_X86_64; x32's syscalls (numbers from
// 0x40000000) are refused.
const (
	seccompArch = 0xc000003e
	seccompX32  = true
)
