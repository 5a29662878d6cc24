package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/polyrepl/polyrepl/internal/proc/proctest"
)

// The real-browser harness: a test writes a Node script (an ES module)
// that drives Debian's chromium through playwright-core, and asserts on
// the JSON the script prints. The page tests and the MCP App test share
// it. What it needs comes from outside the module: node, Debian's
// chromium, and a node_modules directory ($POLYREPL_TEST_BROWSER_MODULES)
// holding playwright-core and @modelcontextprotocol/ext-apps with its
// peers; .ci/run installs them, and a test without them skips saying so.

// chromiumPath is Debian's chromium, the one browser the tests drive.
const chromiumPath = "/usr/bin/chromium"

// browserTagVar marks every process one script run causes — node, and
// chromium with all its helpers, which inherit node's environment — so
// the harness can prove none is left, as the env's tag does for polyrepl.
const browserTagVar = "POLYREPL_TEST_BROWSER_TAG"

// browser is what a browser test runs with.
type browser struct {
	node     string
	modules  string // a node_modules directory holding playwright-core
	chromium string
}

// needBrowser skips a test when node, the npm modules or chromium is
// absent, naming which and how CI gets it.
func needBrowser(t *testing.T) *browser {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("needs node (Debian: nodejs; .ci/run installs it)")
	}
	modules := os.Getenv("POLYREPL_TEST_BROWSER_MODULES")
	if modules == "" {
		t.Skip("needs npm's playwright-core and @modelcontextprotocol/ext-apps: set POLYREPL_TEST_BROWSER_MODULES to a node_modules holding them (.ci/run does: npm install playwright-core @modelcontextprotocol/ext-apps)")
	}
	for _, m := range []string{"playwright-core", "@modelcontextprotocol/ext-apps"} {
		if _, err := os.Stat(filepath.Join(modules, m, "package.json")); err != nil {
			t.Skipf("$POLYREPL_TEST_BROWSER_MODULES (%s) lacks %s (npm install %s)", modules, m, m)
		}
	}
	if _, err := os.Stat(chromiumPath); err != nil {
		t.Skipf("needs Debian's chromium at %s (apt-get install chromium; .ci/run installs it)", chromiumPath)
	}
	return &browser{node: node, modules: modules, chromium: chromiumPath}
}

// browserRun is one run of a Node script.
type browserRun struct {
	// script is the ES module's text. It may import "./browser.mjs":
	// launch() (chromium, headless, as the harness configures it),
	// input (the run's input, decoded) and result(value) (the reply the
	// test gets; call it once).
	script string
	input  any               // given to the script as JSON
	files  map[string]string // more files beside the script (a host page, …)
	env    []string          // more environment variables, KEY=value
	bound  time.Duration     // the whole run's upper bound; default 90 s
}

// browserModule is the helper every script may import.
const browserModule = `// Written by e2e/browser_test.go for one run.
import { chromium } from "playwright-core";
import { readFileSync } from "node:fs";

export const input = JSON.parse(readFileSync(new URL("./input.json", import.meta.url), "utf8"));

// launch starts Debian's chromium headless, with nothing of its own
// reaching the network.
export function launch(options = {}) {
  return chromium.launch({
    executablePath: process.env.POLYREPL_TEST_CHROMIUM,
    headless: true,
    args: ["--no-sandbox", "--disable-background-networking"],
    ...options,
  });
}

// result prints the run's reply, the one line the test decodes.
export function result(value) {
  process.stdout.write("\n" + JSON.stringify(value) + "\n");
}
`

// run runs r and decodes the script's reply into out, failing the test
// with the script's stderr when it fails, does not finish within its
// bound, or leaves a process behind.
func (b *browser) run(t *testing.T, r browserRun, out any) {
	t.Helper()
	reply, stderr, err := b.exec(t, r)
	if err != nil {
		t.Fatalf("the browser script: %v\nits stderr:\n%s", err, clip(stderr))
	}
	if out != nil {
		if err := json.Unmarshal(reply, out); err != nil {
			t.Fatalf("the browser script's reply: %v: %s\nits stderr:\n%s", err, clip(string(reply)), clip(stderr))
		}
	}
}

// exec runs r: it writes the script, its helper, its input and files into
// a fresh directory whose node_modules is the browser modules, runs node
// in its own process group under a bound, and returns the script's last
// line of output (its reply) and its stderr. Whatever happens, every
// process the run caused is gone when it returns: on the bound, node's
// group gets SIGTERM (playwright then ends the browser it launched, which
// has a process group of its own), then SIGKILL; anything still carrying
// the run's tag is killed and reported as an error.
func (b *browser) exec(t *testing.T, r browserRun) (reply []byte, stderr string, err error) {
	t.Helper()
	dir := t.TempDir()
	if err := os.Symlink(b.modules, filepath.Join(dir, "node_modules")); err != nil {
		return nil, "", err
	}
	in, err := json.Marshal(r.input)
	if err != nil {
		return nil, "", fmt.Errorf("encoding the script's input: %w", err)
	}
	files := map[string]string{"script.mjs": r.script, "browser.mjs": browserModule, "input.json": string(in)}
	for name, text := range r.files {
		files[name] = text
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o600); err != nil {
			return nil, "", err
		}
	}
	bound := r.bound
	if bound == 0 {
		bound = 90 * time.Second
	}
	tag := browserTagVar + "=" + newTag()
	ctx, cancel := context.WithTimeout(context.Background(), bound)
	defer cancel()
	cmd := exec.Command(b.node, filepath.Join(dir, "script.mjs"))
	cmd.Dir = dir
	cmd.Env = append(append(os.Environ(), tag, "POLYREPL_TEST_CHROMIUM="+b.chromium), r.env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	var outb, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &outb, &errb
	if err := cmd.Start(); err != nil {
		return nil, "", fmt.Errorf("starting node: %w", err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var runErr error
	select {
	case runErr = <-done:
	case <-ctx.Done():
		syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-done
		}
		runErr = fmt.Errorf("no reply within %s (ended)", bound)
	}
	if left := browserLeftovers(tag); len(left) > 0 {
		runErr = errors.Join(runErr, fmt.Errorf("processes left behind by the browser script (now killed):%s", proctest.Describe(left)))
	}
	stderr = errb.String()
	if runErr == nil {
		lines := strings.Split(strings.TrimSpace(outb.String()), "\n")
		reply = []byte(lines[len(lines)-1])
		if len(reply) == 0 {
			runErr = errors.New("the script printed no reply (call result())")
		}
	} else if exit := (*exec.ExitError)(nil); errors.As(runErr, &exit) {
		runErr = fmt.Errorf("node: %w; stdout: %s", runErr, clip(outb.String()))
	}
	return reply, stderr, runErr
}

// browserLeftovers waits a little for the processes carrying tag to end,
// then kills and returns those that did not.
func browserLeftovers(tag string) []proctest.Process {
	var left []proctest.Process
	waitFor(5*time.Second, func() bool {
		left = proctest.WithVar(tag)
		return len(left) == 0
	})
	for _, p := range left {
		syscall.Kill(p.PID, syscall.SIGKILL)
	}
	return left
}

// TestBrowserHarness: a script launches chromium through the harness,
// loads a page and returns what the page computed; a script that hangs
// with chromium open is ended at its bound, with its stderr, and leaves
// no node or chromium process behind.
func TestBrowserHarness(t *testing.T) {
	b := needBrowser(t)
	t.Parallel()
	var got struct {
		Sum       int    `json:"sum"`
		UserAgent string `json:"userAgent"`
		Input     string `json:"input"`
	}
	b.run(t, browserRun{
		script: `import { launch, input, result } from "./browser.mjs";
const browser = await launch();
const page = await browser.newPage();
await page.setContent("<p id=p>" + input.word + "</p>");
result({
  sum: await page.evaluate(() => 20 + 22),
  userAgent: await page.evaluate(() => navigator.userAgent),
  input: await page.textContent("#p"),
});
await browser.close();
`,
		input: map[string]string{"word": "héllo"},
	}, &got)
	if got.Sum != 42 || got.Input != "héllo" || !strings.Contains(got.UserAgent, "Chrome") {
		t.Errorf("the page's reply: %+v", got)
	}

	_, stderr, err := b.exec(t, browserRun{
		script: `import { launch } from "./browser.mjs";
const browser = await launch();
await browser.newPage();
console.error("chromium is open; hanging");
await new Promise(() => setInterval(() => {}, 1000));
`,
		// Long enough for chromium to open a page on a loaded machine
		// (10 s was not, once, beside the rest of the suite).
		bound: 20 * time.Second,
	})
	if err == nil || !strings.Contains(err.Error(), "no reply within") {
		t.Errorf("a hanging script: err %v", err)
	}
	if err != nil && strings.Contains(err.Error(), "left behind") {
		t.Errorf("the hanging script's processes outlived it: %v", err)
	}
	wantContains(t, "the hanging script's stderr", stderr, "chromium is open; hanging")
}
