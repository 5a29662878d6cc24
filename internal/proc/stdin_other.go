//go:build linux && !amd64 && !arm64

package proc

// No table for this architecture: WaitsOnStdin says false, and a runtime
// that reads its console there is not seen asking (README).
var sysNums = syscallNums{read: -1, sel: -1, pselect6: -1, poll: -1, ppoll: -1, epollWait: -1, epollPwait: -1, epollPwait2: -1}
