package limit

import (
	"fmt"
	"strings"

	"golang.org/x/sys/unix"
)

// choose finds the best way this machine allows: the cgroup to use and
// its version, or why there is none.
func choose(want string) (by, dir, why string) {
	if want == ByRlimit {
		return "", "", "$POLYREPL_MEMORY_BY asks for the rlimit"
	}
	var whys []string
	dir, err := delegatedV2(nil)
	if err != nil {
		whys = append(whys, err.Error())
		if scope, serr := askSystemd(); serr != nil {
			whys = append(whys, serr.Error())
		} else if dir, err = delegatedV2(&scope); err != nil {
			whys = append(whys, err.Error())
		}
	}
	if err == nil {
		if err = prepareV2(dir); err == nil {
			return ByCgroup, dir, ""
		}
		whys = append(whys, err.Error())
	}
	dir, err = writableV1()
	if err == nil {
		return ByCgroupV1, dir, ""
	}
	whys = append(whys, err.Error())
	return "", "", strings.Join(whys, "; ")
}

// setRlimit holds pid, and what it starts from now on, to bytes of data
// (RLIMIT_DATA, which children inherit): the way left where no cgroup is.
func setRlimit(pid int, bytes int64) error {
	lim := &unix.Rlimit{Cur: uint64(bytes), Max: uint64(bytes)}
	if err := unix.Prlimit(pid, unix.RLIMIT_DATA, lim, nil); err != nil {
		return fmt.Errorf("cannot limit the session's memory: no cgroup to use, and setrlimit failed: %w", err)
	}
	return nil
}
