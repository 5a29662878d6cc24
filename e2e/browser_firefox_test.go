package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The real-browser harness in Firefox: Debian's firefox-esr, a stock
// Firefox that playwright cannot drive (it needs its own patched build),
// driven over WebDriver BiDi by npm's puppeteer-core, which downloads
// nothing. A script imports "./firefox.mjs" instead of "./browser.mjs";
// everything else — the run's directory, its bound, its tag and the proof
// that no process outlives it — is the chromium harness's (browser.exec).

// firefoxPath is Debian's firefox-esr.
const firefoxPath = "/usr/bin/firefox-esr"

// needFirefox skips a test when node, puppeteer-core in the browser
// modules, or firefox-esr is absent, naming which and how CI gets it.
func needFirefox(t *testing.T) *browser {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("needs node (Debian: nodejs; .ci/run installs it)")
	}
	modules := os.Getenv("POLYREPL_TEST_BROWSER_MODULES")
	if modules == "" {
		t.Skip("needs npm's puppeteer-core: set POLYREPL_TEST_BROWSER_MODULES to a node_modules holding it (.ci/run does: npm install puppeteer-core)")
	}
	if _, err := os.Stat(filepath.Join(modules, "puppeteer-core", "package.json")); err != nil {
		t.Skipf("$POLYREPL_TEST_BROWSER_MODULES (%s) lacks puppeteer-core (npm install puppeteer-core)", modules)
	}
	if _, err := os.Stat(firefoxPath); err != nil {
		t.Skipf("needs Debian's firefox-esr at %s (apt-get install firefox-esr; .ci/run installs it)", firefoxPath)
	}
	return &browser{node: node, modules: modules, chromium: chromiumPath}
}

// firefoxRun is r with the Firefox helper beside its script.
func firefoxRun(r browserRun) browserRun {
	files := map[string]string{"firefox.mjs": firefoxModule}
	for name, text := range r.files {
		files[name] = text
	}
	r.files = files
	r.env = append([]string{"POLYREPL_TEST_FIREFOX=" + firefoxPath}, r.env...)
	return r
}

// firefoxModule is the helper a Firefox script imports.
const firefoxModule = `// Written by e2e/browser_firefox_test.go for one run.
import puppeteer from "puppeteer-core";
import { mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";

export const input = JSON.parse(readFileSync(new URL("./input.json", import.meta.url), "utf8"));

// Firefox runs as whoever runs the test (root in CI): it gets a HOME of
// its own in the run's directory, which the test removes even when the
// script was ended at its bound; puppeteer makes the profile in a
// temporary directory and removes it on close.
const home = join(process.cwd(), "home");
mkdirSync(home, { recursive: true });

// Nothing Firefox does on its own may reach the network: no updates, no
// telemetry or health report, no captive-portal or connectivity probe,
// no remote settings, safe browsing or sync; and every request to a
// host other than localhost goes to a proxy on a closed port, so what a
// pref forgot fails instead of leaving the machine.
const offline = {
  "app.update.enabled": false,
  "app.update.auto": false,
  "app.update.disabledForTesting": true,
  "app.normandy.enabled": false,
  "app.shield.optoutstudies.enabled": false,
  "toolkit.telemetry.enabled": false,
  "toolkit.telemetry.unified": false,
  "toolkit.telemetry.server": "",
  "datareporting.healthreport.uploadEnabled": false,
  "datareporting.policy.dataSubmissionEnabled": false,
  "network.captive-portal-service.enabled": false,
  "network.connectivity-service.enabled": false,
  "services.settings.server": "data:,#remote-settings-off/v1",
  "browser.safebrowsing.malware.enabled": false,
  "browser.safebrowsing.phishing.enabled": false,
  "browser.safebrowsing.downloads.enabled": false,
  "browser.safebrowsing.update.enabled": false,
  "extensions.update.enabled": false,
  "extensions.getAddons.cache.enabled": false,
  "identity.fxaccounts.enabled": false,
  "network.dns.disablePrefetch": true,
  "network.prefetch-next": false,
  "network.proxy.type": 1,
  "network.proxy.http": "127.0.0.1",
  "network.proxy.http_port": 9,
  "network.proxy.ssl": "127.0.0.1",
  "network.proxy.ssl_port": 9,
  "network.proxy.no_proxies_on": "",
  "network.proxy.allow_hijacking_localhost": false,
};

// launch starts Debian's firefox-esr headless over WebDriver BiDi.
export function launch(options = {}) {
  return puppeteer.launch({
    browser: "firefox",
    executablePath: process.env.POLYREPL_TEST_FIREFOX,
    headless: true,
    env: { ...process.env, HOME: home },
    extraPrefsFirefox: offline,
    protocolTimeout: 120000,
    ...options,
  });
}

// result prints the run's reply, the one line the test decodes.
export function result(value) {
  process.stdout.write("\n" + JSON.stringify(value) + "\n");
}
`

// TestFirefoxHarness: a script launches Firefox through the helper and
// returns what a page computed; a script that hangs with Firefox open is
// ended at its bound, with its stderr, and leaves no node or firefox
// process behind.
func TestFirefoxHarness(t *testing.T) {
	b := needFirefox(t)
	t.Parallel()
	var got struct {
		Sum       int    `json:"sum"`
		UserAgent string `json:"userAgent"`
		Home      bool   `json:"home"`
	}
	b.run(t, firefoxRun(browserRun{
		script: `import { launch, result } from "./firefox.mjs";
const browser = await launch();
const page = await browser.newPage();
await page.setContent("<p>x</p>");
result({ sum: await page.evaluate(() => 20 + 22), userAgent: await browser.userAgent() });
await browser.close();
`,
		bound: 2 * time.Minute,
	}), &got)
	if got.Sum != 42 || !strings.Contains(got.UserAgent, "Firefox/") {
		t.Errorf("the page's reply: %+v", got)
	}

	_, stderr, err := b.exec(t, firefoxRun(browserRun{
		script: `import { launch } from "./firefox.mjs";
const browser = await launch();
await browser.newPage();
console.error("firefox is open; hanging");
await new Promise(() => setInterval(() => {}, 1000));
`,
		// Firefox takes 5-10 s to open a page here; more on a loaded
		// machine.
		bound: 45 * time.Second,
	}))
	if err == nil || !strings.Contains(err.Error(), "no reply within") {
		t.Errorf("a hanging script: err %v", err)
	}
	if err != nil && strings.Contains(err.Error(), "left behind") {
		t.Errorf("the hanging script's processes outlived it: %v", err)
	}
	wantContains(t, "the hanging script's stderr", stderr, "firefox is open; hanging")
}
