package proc

var sysNums = syscallNums{read: 0, sel: 23, pselect6: 270, poll: 7, ppoll: 271, epollWait: 232, epollPwait: 281, epollPwait2: 441}
