// Package e2e drives the real polyrepl binary against a real daemon on a
// temporary XDG_RUNTIME_DIR and XDG_STATE_HOME, with real Python sessions:
// Go tests for behaviour that needs a program (harness_test.go), and
// testscript scripts for the CLI's output and exit status
// (testdata/script, run by TestScripts). Every test and script proves at
// teardown that no process it caused is left alive.
//
// The package holds only tests; this file gives it its comment.
package e2e
