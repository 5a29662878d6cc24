package console

// fionread is the ioctl asking how many bytes a pipe holds unread:
// FIONREAD, _IOR('f', 127, int), which golang.org/x/sys does not name for
// darwin.
const fionread = 0x4004667f
