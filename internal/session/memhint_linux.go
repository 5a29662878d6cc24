package session

// memoryHint is what to do when a session's memory limit cannot be set.
const memoryHint = "run without a memory limit, or give the daemon a delegated cgroup"
