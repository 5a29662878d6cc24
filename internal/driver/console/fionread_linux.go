package console

import "golang.org/x/sys/unix"

// fionread is the ioctl asking how many bytes a pipe holds unread
// (FIONREAD, which Linux names TIOCINQ).
const fionread = unix.TIOCINQ
