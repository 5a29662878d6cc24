package mcp

import (
	"errors"
	"fmt"

	"github.com/polyrepl/polyrepl/internal/client"
)

// argError is a refused tool argument, worded for a model: what is wrong
// and what to send instead, naming the tool's arguments.
type argError struct{ msg, hint string }

func (e *argError) Error() string { return e.msg + "\nWhat to do: " + e.hint }

// spawnError words a refused spawn input by its exec argument.
func spawnError(err error) error {
	var se *client.SpawnError
	if !errors.As(err, &se) {
		return err
	}
	switch se.Kind {
	case client.SpawnNoDir:
		return &argError{se.Error(), fmt.Sprintf("give an existing directory as the %q argument (a relative one is taken from where the MCP server runs)", se.Field)}
	case client.SpawnConflict:
		return &argError{fmt.Sprintf("the %q and %q arguments name different executables", se.Field, se.Other), "give one of them"}
	case client.SpawnNotPython:
		return &argError{fmt.Sprintf("the %q argument is for Python sessions, not %s", se.Field, se.Value), `name the executable with "exe"`}
	case client.SpawnNotJupyter:
		return &argError{fmt.Sprintf("the %q argument is for Jupyter kernels, not the runtime %s", se.Field, se.Value), `give "runtime" as jupyter:KERNEL`}
	case client.SpawnNoBase:
		return &argError{fmt.Sprintf("the %q argument %s is relative, and the MCP server's directory is unknown", se.Field, se.Value), "give an absolute path"}
	}
	return &argError{fmt.Sprintf("the %q argument: %v", se.Field, se.Err), fmt.Sprintf("send a valid %q or leave it out", se.Field)}
}
