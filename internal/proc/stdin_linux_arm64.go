package proc

// arm64 has no select or poll, only their p-variants.
var sysNums = syscallNums{read: 63, sel: -1, pselect6: 72, poll: -1, ppoll: 73, epollWait: -1, epollPwait: 22, epollPwait2: 441}
